"""An SSH workspace behind its CONNECT gateway, and the exec gateway, from the Entryway package.

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

pulumi.export("ssh_config", alice.ssh_config)
pulumi.export("exec_url", exec_gateway.url)
