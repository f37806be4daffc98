module github.com/northwind/stockd

go 1.22
