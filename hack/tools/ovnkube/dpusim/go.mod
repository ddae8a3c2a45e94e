module github.com/ovn-kubernetes/dpu-simulator/lib/dpusim

go 1.25.0
