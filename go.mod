module github.com/memfs/memfs

go 1.26.8

require (
	github.com/gosimple/slug v1.15.0
	github.com/hanwen/go-fuse/v2 v2.12.1
	github.com/mattn/go-sqlite3 v1.14.53
	github.com/moby/sys/mountinfo v0.7.3
	github.com/oklog/ulid/v2 v2.1.2
	github.com/pmezard/go-difflib v1.0.0
	github.com/urfave/cli/v2 v2.27.7
	golang.org/x/sys v0.50.0
	golang.org/x/text v0.44.0
)

require (
	github.com/cpuguy83/go-md2man/v2 v2.0.7 // indirect
	github.com/gosimple/unidecode v1.0.1 // indirect
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
	github.com/xrash/smetrics v0.0.0-20240521201337-686a1a2994c1 // indirect
)
