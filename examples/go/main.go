// A platform repo in Go that deploys an SSH workspace (behind its CONNECT gateway), the exec
// gateway, and AnsibleForms with an RTE in another namespace: the program of examples/yaml.
// `pulumi package add ../..` generates the Go SDK this imports, under sdks/ (there is no checked-in
// copy); go.mod's `replace` names its folder: point it at the one `pulumi package add` reports.
// test/provider/go-example.test.ts generates that SDK from schema.json and runs `go vet` on this.
package main

import (
	"example.com/pulumi-entryway/sdk/go/entryway"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		serviceType := entryway.ConnectGatewayServiceTypeLoadBalancer
		connect, err := entryway.NewConnectGateway(ctx, "connect", &entryway.ConnectGatewayArgs{
			Namespace:           "entryway-connect",
			Hostname:            pulumi.StringRef("ssh.example.com"),
			ServiceType:         &serviceType,
			AllowedSourceRanges: []string{"203.0.113.0/24"},
		})
		if err != nil {
			return err
		}

		alice, err := entryway.NewSshWorkspace(ctx, "alice", &entryway.SshWorkspaceArgs{
			Gateway:   connect.Registration,
			Namespace: "dev-alice",
			User:      pulumi.StringRef("alice"),
			AuthorizedKeys: []string{
				"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGV4YW1wbGUga2V5IGZvciBhbGljZSBvbmx5 alice@example.com",
			},
			Storage: &entryway.SshWorkspaceStorageArgs{Size: pulumi.StringRef("20Gi")},
		})
		if err != nil {
			return err
		}

		authorizer := entryway.ExecGatewayAuthorizerKubernetes
		exec, err := entryway.NewExecGateway(ctx, "exec", &entryway.ExecGatewayArgs{
			Namespace:        pulumi.String("entryway"),
			TargetNamespaces: []string{"dev-alice"},
			Authorizer:       &authorizer,
			Exposure: &entryway.ExecGatewayExposureArgsArgs{
				Kind:          entryway.ExecGatewayExposureKindIstio,
				Host:          "exec.example.com",
				TlsSecretName: "exec-example-com-tls",
			},
		})
		if err != nil {
			return err
		}

		// AnsibleForms whose runner (RTE) runs elsewhere, and that RTE: it dials the app with the
		// token the app generated (a secret output; it stays one in the RTE's Secret).
		remote := entryway.AnsibleFormsRteModeRemote
		forms, err := entryway.NewAnsibleForms(ctx, "forms", &entryway.AnsibleFormsArgs{
			Namespace: pulumi.String("ansibleforms"),
			Rte:       &entryway.AnsibleFormsRteSettingsArgs{Mode: &remote},
		})
		if err != nil {
			return err
		}
		_, err = entryway.NewRemoteRte(ctx, "dc2", &entryway.RemoteRteArgs{
			Namespace: pulumi.String("ansibleforms-rte"),
			AppUrl:    forms.Url,
			// The app's in-cluster Service is plain http: allowed here, explicitly.
			AllowInsecureAppUrl: pulumi.BoolRef(true),
			Token:               forms.RteToken,
		})
		if err != nil {
			return err
		}

		ctx.Export("sshConfig", alice.SshConfig)
		ctx.Export("execUrl", exec.Url)
		ctx.Export("formsUrl", forms.Url)
		ctx.Export("formsAdminPassword", forms.AdminPassword)
		return nil
	})
}
