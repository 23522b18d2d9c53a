// An SSH workspace behind its CONNECT gateway, the exec gateway, and AnsibleForms with a remote
// RTE, from the Entryway component package's generated C# SDK (namespace Pulumi.Entryway).
// test/provider/examples.test.ts checks the classes, properties and enum members here against
// schema.json; no .NET SDK is on the machine that runs the tests, so it is not compiled there.
using System.Collections.Generic;
using Pulumi;
using Entryway = Pulumi.Entryway;

return await Deployment.RunAsync(() =>
{
    var connect = new Entryway.ConnectGateway("connect", new Entryway.ConnectGatewayArgs
    {
        Namespace = "entryway-connect",
        Hostname = "ssh.example.com",
        ServiceType = Entryway.ConnectGatewayServiceType.LoadBalancer,
        AllowedSourceRanges = { "203.0.113.0/24" },
    });

    var alice = new Entryway.SshWorkspace("alice", new Entryway.SshWorkspaceArgs
    {
        Gateway = connect.Registration,
        Namespace = "dev-alice",
        User = "alice",
        AuthorizedKeys =
        {
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGV4YW1wbGUga2V5IGZvciBhbGljZSBvbmx5 alice@example.com",
        },
        Storage = new Entryway.Inputs.SshWorkspaceStorageArgs { Size = "20Gi" },
    });

    var exec = new Entryway.ExecGateway("exec", new Entryway.ExecGatewayArgs
    {
        Namespace = "entryway",
        TargetNamespaces = { "dev-alice" },
        Authorizer = Entryway.ExecGatewayAuthorizer.Kubernetes,
        Exposure = new Entryway.Inputs.ExecGatewayExposureArgsArgs
        {
            Kind = Entryway.ExecGatewayExposureKind.Istio,
            Host = "exec.example.com",
            TlsSecretName = "exec-example-com-tls",
        },
    });

    // AnsibleForms whose runner (RTE) runs elsewhere, and that RTE: it dials the app with the token
    // the app generated (a secret output; it stays one in the RTE's Secret).
    var forms = new Entryway.AnsibleForms("forms", new Entryway.AnsibleFormsArgs
    {
        Namespace = "ansibleforms",
        Rte = new Entryway.Inputs.AnsibleFormsRteSettingsArgs { Mode = Entryway.AnsibleFormsRteMode.Remote },
    });
    new Entryway.RemoteRte("dc2", new Entryway.RemoteRteArgs
    {
        Namespace = "ansibleforms-rte",
        AppUrl = forms.Url,
        // The app's in-cluster Service is plain http: allowed here, explicitly.
        AllowInsecureAppUrl = true,
        Token = forms.RteToken!,
    });

    return new Dictionary<string, object?>
    {
        ["sshConfig"] = alice.SshConfig,
        ["execUrl"] = exec.Url,
        ["formsUrl"] = forms.Url,
        ["formsAdminPassword"] = forms.AdminPassword,
    };
});
