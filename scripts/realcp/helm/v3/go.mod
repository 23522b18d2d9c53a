module entryway.local/realcp/helm3

go 1.26.0

require helm.sh/helm/v3 v3.21.4
