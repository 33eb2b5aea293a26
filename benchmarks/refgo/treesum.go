package main

// A JSON view of pkg/tree.Build's result. The reference structs have no JSON tags and
// carry whole extracted pod specs; the view keeps the shape (components, instances, keys,
// scale) and names which extracted parts each instance has.

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/run-ai/karta/pkg/resource"
	"github.com/run-ai/karta/pkg/tree"
)

type TreeReport struct {
	Phases   []string     `json:"phases"`
	Children []NodeReport `json:"children"`
}

type NodeReport struct {
	Name             string                   `json:"name"`
	Kind             *metav1.GroupVersionKind `json:"kind"`
	HasPodDefinition bool                     `json:"hasPodDefinition"`
	Instances        []InstanceNodeReport     `json:"instances"`
}

type InstanceNodeReport struct {
	InstanceKey    *string         `json:"instanceKey"`
	ReplicaKey     *string         `json:"replicaKey"`
	Scale          *resource.Scale `json:"scale"`
	ExtractedParts []string        `json:"extractedParts"`
	Children       []NodeReport    `json:"children"`
}

func summarizeTree(t *tree.WorkloadTree) *TreeReport {
	report := &TreeReport{Children: summarizeNodes(t.Children)}
	if t.Status != nil {
		report.Phases = t.Status.Phases
	}
	return report
}

func summarizeNodes(nodes []tree.ComponentNode) []NodeReport {
	out := make([]NodeReport, 0, len(nodes))
	for _, node := range nodes {
		instances := make([]InstanceNodeReport, 0, len(node.Instances))
		for _, instance := range node.Instances {
			parts := []string{}
			if instance.ExtractedInstance != nil {
				parts = extractedParts(instance.ExtractedInstance)
			}
			instances = append(instances, InstanceNodeReport{
				InstanceKey:    instance.InstanceKey,
				ReplicaKey:     instance.ReplicaKey,
				Scale:          instance.Scale,
				ExtractedParts: parts,
				Children:       summarizeNodes(instance.Children),
			})
		}
		out = append(out, NodeReport{
			Name:             node.Name,
			Kind:             node.Kind,
			HasPodDefinition: node.HasPodDefinition,
			Instances:        instances,
		})
	}
	return out
}
