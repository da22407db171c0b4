module github.com/meshplane/meshplane/images

go 1.26.3

require github.com/google/go-containerregistry v0.21.9

require (
	github.com/klauspost/compress v1.19.1 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
)
