module github.com/northbank/ledger

go 1.22
