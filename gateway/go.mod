module github.com/meshplane/meshplane/gateway

go 1.26.3

replace (
	github.com/meshplane/meshplane/apis => ../apis
	github.com/meshplane/meshplane/sdk => ../sdk
)

require (
	github.com/99designs/gqlgen v0.17.95 // indirect
	github.com/agnivade/levenshtein v1.2.2 // indirect
	github.com/goccy/go-yaml v1.19.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/sosodev/duration v1.4.0 // indirect
	github.com/urfave/cli/v3 v3.11.0 // indirect
	github.com/vektah/gqlparser/v2 v2.5.64 // indirect
	golang.org/x/mod v0.40.0 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/text v0.41.0 // indirect
	golang.org/x/tools v0.49.0 // indirect
	k8s.io/apimachinery v0.36.6 // indirect
	k8s.io/client-go v0.36.6 // indirect
)
