module entryway.local/realcp/helm4

go 1.26.0

require helm.sh/helm/v4 v4.3.2
