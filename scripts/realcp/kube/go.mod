module entryway.local/realcp/kube

go 1.26.0

require (
	go.etcd.io/etcd/server/v3 v3.7.0
	k8s.io/kubernetes v1.37.2
)

// recipe.sh appends here one replace line per staging module k8s.io/kubernetes's own go.mod names
// (it points them at ./staging, which a module dependency cannot use).
