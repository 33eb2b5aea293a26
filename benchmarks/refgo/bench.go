package main

// The bench mode: times the reference library on the workloads the Python benchmark
// generates, so both engines run the same inputs.
//
// Input:
//
//	{"kartas": {"<name>": Karta, ...},
//	 "workloads": [{"karta": "<name>", "object": {...}, "pods": [...]}, ...],
//	 "sections": ["attribution", "status", "tree"],   (default: all three)
//	 "repeat": 3}                                      (best of N; default 1)
//
// Decoding JSON into Go values is done before timing (a scheduler receives typed pods);
// building the component factory (the library's lazy JSON view of the object) is timed.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/run-ai/karta/pkg/api/runai/v1alpha1"
	"github.com/run-ai/karta/pkg/instructions"
	"github.com/run-ai/karta/pkg/resource"
	"github.com/run-ai/karta/pkg/tree"
)

type benchRequest struct {
	Kartas    map[string]json.RawMessage `json:"kartas"`
	Workloads []benchWorkloadRequest     `json:"workloads"`
	Sections  []string                   `json:"sections"`
	Repeat    int                        `json:"repeat"`
}

type benchWorkloadRequest struct {
	Karta  string            `json:"karta"`
	Object json.RawMessage   `json:"object"`
	Pods   []json.RawMessage `json:"pods"`
}

type benchWorkload struct {
	karta   *v1alpha1.Karta
	summary *instructions.StructureSummary
	object  *unstructured.Unstructured
	pods    []decodedPod
}

// BenchSection is the timing of one section and what it produced (to check both engines
// did the same work).
type BenchSection struct {
	Seconds    float64   `json:"seconds"`
	AllSeconds []float64 `json:"allSeconds"`
	Counts     any       `json:"counts"`
}

type BenchReport struct {
	Reference map[string]string        `json:"reference"`
	Workloads int                      `json:"workloads"`
	Pods      int                      `json:"pods"`
	Sections  map[string]*BenchSection `json:"sections"`
}

func runBench(r io.Reader) (any, error) {
	data, err := readAll(r)
	if err != nil {
		return nil, err
	}
	var req benchRequest
	if err := json.Unmarshal(data, &req); err != nil {
		return nil, fmt.Errorf("bench input is not a JSON object {kartas, workloads, sections, repeat}: %w", err)
	}
	workloads, podCount, err := decodeBenchWorkloads(&req)
	if err != nil {
		return nil, err
	}
	sections := req.Sections
	if len(sections) == 0 {
		sections = []string{"attribution", "status", "tree"}
	}
	repeat := max(req.Repeat, 1)

	report := &BenchReport{
		Reference: map[string]string{"module": referenceModule, "version": referenceVersion()},
		Workloads: len(workloads),
		Pods:      podCount,
		Sections:  map[string]*BenchSection{},
	}
	ctx := context.Background()
	for _, section := range sections {
		var run func(context.Context, []benchWorkload) any
		switch section {
		case "attribution":
			run = benchAttribution
		case "status":
			run = benchStatus
		case "tree":
			run = benchTree
		default:
			return nil, fmt.Errorf("unknown bench section %q (want attribution, status or tree)", section)
		}
		result := &BenchSection{}
		for i := 0; i < repeat; i++ {
			start := time.Now()
			result.Counts = run(ctx, workloads)
			elapsed := time.Since(start).Seconds()
			result.AllSeconds = append(result.AllSeconds, elapsed)
			if i == 0 || elapsed < result.Seconds {
				result.Seconds = elapsed
			}
		}
		report.Sections[section] = result
	}
	return report, nil
}

func decodeBenchWorkloads(req *benchRequest) ([]benchWorkload, int, error) {
	type decodedKarta struct {
		karta   *v1alpha1.Karta
		summary *instructions.StructureSummary
	}
	kartas := map[string]decodedKarta{}
	for name, raw := range req.Kartas {
		karta, _, err := decodeKarta(raw)
		if err != nil {
			return nil, 0, fmt.Errorf("kartas[%q]: %w", name, err)
		}
		summary, err := instructions.NewStructureSummary(karta)
		if err != nil {
			return nil, 0, fmt.Errorf("kartas[%q]: %w", name, err)
		}
		kartas[name] = decodedKarta{karta: karta, summary: summary}
	}
	workloads := make([]benchWorkload, 0, len(req.Workloads))
	podCount := 0
	for i, w := range req.Workloads {
		k, ok := kartas[w.Karta]
		if !ok {
			return nil, 0, fmt.Errorf("workloads[%d].karta: no Karta named %q in \"kartas\"", i, w.Karta)
		}
		object, err := decodeObject(w.Object)
		if err != nil {
			return nil, 0, fmt.Errorf("workloads[%d]: %w", i, err)
		}
		pods := decodePods(w.Pods)
		for _, p := range pods {
			if p.Err != nil {
				return nil, 0, fmt.Errorf("workloads[%d]: %w", i, p.Err)
			}
		}
		podCount += len(pods)
		workloads = append(workloads, benchWorkload{karta: k.karta, summary: k.summary, object: object, pods: pods})
	}
	return workloads, podCount, nil
}

// benchAttribution attributes and groups every pod of every workload.
func benchAttribution(ctx context.Context, workloads []benchWorkload) any {
	attributed, grouped, groups, failures := 0, 0, 0, 0
	for _, w := range workloads {
		factory := resource.NewComponentFactoryFromObject(w.karta, w.object)
		reports, podGroups := groupPods(ctx, w.karta, factory, w.summary, w.pods, string(w.object.GetUID()))
		for _, r := range reports {
			if r.Component != nil {
				attributed++
			} else {
				failures++
			}
			if r.PodGroup != nil {
				grouped++
			}
		}
		groups += len(podGroups)
	}
	return map[string]int{"attributed": attributed, "grouped": grouped, "groups": groups, "unattributed": failures}
}

// benchStatus extracts the root status of every workload.
func benchStatus(ctx context.Context, workloads []benchWorkload) any {
	byPhase := map[string]int{}
	for _, w := range workloads {
		factory := resource.NewComponentFactoryFromObject(w.karta, w.object)
		root, err := factory.GetRootComponent()
		if err != nil {
			byPhase["error"]++
			continue
		}
		status, err := root.GetStatus(ctx)
		if err != nil || status == nil {
			byPhase["error"]++
			continue
		}
		for _, s := range status.MatchedStatuses {
			byPhase[string(s)]++
		}
	}
	return byPhase
}

// benchTree builds the workload tree of every workload.
func benchTree(ctx context.Context, workloads []benchWorkload) any {
	built, failures := 0, 0
	for _, w := range workloads {
		factory := resource.NewComponentFactoryFromObject(w.karta, w.object)
		if _, err := tree.Build(ctx, factory); err != nil {
			failures++
			continue
		}
		built++
	}
	return map[string]int{"built": built, "failed": failures}
}
