module github.com/pipeline-hq/connect

go 1.22
