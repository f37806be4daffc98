module github.com/registra/companies-api

go 1.22

require github.com/veritas-data/namematch v1.8.2
