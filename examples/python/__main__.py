"""An SSH workspace behind its CONNECT gateway, the exec gateway, and AnsibleForms with a remote
RTE, from the Entryway package.

`pulumi package add ../..` generates the `pulumi_entryway` SDK this imports (there is no
checked-in copy: the CLI makes it from the package's schema). Nested settings are plain dicts
with the SDK's snake_case keys. test/provider/examples.test.ts checks the names and literal
values here against schema.json.
"""

import pulumi
import pulumi_entryway as entryway

connect = entryway.ConnectGateway(
    "connect",
    namespace="entryway-connect",
    hostname="ssh.example.com",
    service_type="LoadBalancer",
    allowed_source_ranges=["203.0.113.0/24"],
)

alice = entryway.SshWorkspace(
    "alice",
    gateway=connect.registration,
    namespace="dev-alice",
    user="alice",
    authorized_keys=[
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGV4YW1wbGUga2V5IGZvciBhbGljZSBvbmx5 alice@example.com",
    ],
    storage={"size": "20Gi"},
)

exec_gateway = entryway.ExecGateway(
    "exec",
    namespace="entryway",
    target_namespaces=["dev-alice"],
    authorizer="kubernetes",
    exposure={
        "kind": "istio",
        "host": "exec.example.com",
        "tls_secret_name": "exec-example-com-tls",
    },
)

# AnsibleForms whose runner (RTE) runs elsewhere, and that RTE: it dials the app with the token
# the app generated (a secret output; it stays one in the RTE's Secret).
forms = entryway.AnsibleForms("forms", namespace="ansibleforms", rte={"mode": "remote"})
dc2 = entryway.RemoteRte(
    "dc2",
    namespace="ansibleforms-rte",
    app_url=forms.url,
    # The app's in-cluster Service is plain http: allowed here, explicitly.
    allow_insecure_app_url=True,
    token=forms.rte_token,
)

pulumi.export("ssh_config", alice.ssh_config)
pulumi.export("exec_url", exec_gateway.url)
pulumi.export("forms_url", forms.url)
pulumi.export("forms_admin_password", forms.admin_password)
