module entryway.local/realcp/random-standin

go 1.26.0

require (
	github.com/pulumi/pulumi/sdk/v3 v3.276.0
	golang.org/x/crypto v0.54.0
	google.golang.org/protobuf v1.36.12-0.20260120151049-f2248ac996af
)
