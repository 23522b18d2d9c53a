module entryway.local/realcp/istio

go 1.26.0

require istio.io/istio v0.0.0-20260827124520-eed52ebb66ad
