module github.com/fernpay/transfers

go 1.22
