module github.com/tallyhq/workspaces

go 1.22
