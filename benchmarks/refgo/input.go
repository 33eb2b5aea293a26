package main

// Decoding of the JSON the Python side sends: a Karta, a workload object and its pods.
// Kartas decode into the reference's own Go types, so fields the pinned version does not
// know (newer schema additions such as matchLabels) are dropped exactly as a Go consumer
// of that version would drop them; they are reported in ignoredKartaFields.

import (
	"encoding/json"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsjson "sigs.k8s.io/json"

	"github.com/run-ai/karta/pkg/api/runai/v1alpha1"
)

// decodeKarta decodes a Karta (or the older ResourceInterface, whose spec has the same
// shape) and lists the fields the pinned reference types do not have.
func decodeKarta(raw json.RawMessage) (*v1alpha1.Karta, []string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil, fmt.Errorf("request field \"karta\" is missing")
	}
	karta := &v1alpha1.Karta{}
	if err := json.Unmarshal(raw, karta); err != nil {
		return nil, nil, fmt.Errorf("request field \"karta\": %w", err)
	}
	strict := &v1alpha1.Karta{}
	strictErrs, err := sigsjson.UnmarshalStrict(raw, strict, sigsjson.DisallowUnknownFields)
	if err != nil {
		return nil, nil, fmt.Errorf("request field \"karta\": %w", err)
	}
	ignored := make([]string, 0, len(strictErrs))
	for _, e := range strictErrs {
		ignored = append(ignored, e.Error())
	}
	sort.Strings(ignored)
	return karta, ignored, nil
}

// decodeObject decodes the workload object as unstructured data.
func decodeObject(raw json.RawMessage) (*unstructured.Unstructured, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, fmt.Errorf("request field \"object\" is missing")
	}
	object := map[string]any{}
	if err := json.Unmarshal(raw, &object); err != nil {
		return nil, fmt.Errorf("request field \"object\" must be a JSON object: %w", err)
	}
	return &unstructured.Unstructured{Object: object}, nil
}

// decodedPod is one pod of the request, typed as a scheduler receives it.
type decodedPod struct {
	Name string
	Pod  *corev1.Pod
	Err  error
}

// decodePods decodes every pod into corev1.Pod; a pod that does not decode keeps its error
// and is reported as such instead of aborting the whole request.
func decodePods(raws []json.RawMessage) []decodedPod {
	pods := make([]decodedPod, 0, len(raws))
	for i, raw := range raws {
		pod := &corev1.Pod{}
		if err := json.Unmarshal(raw, pod); err != nil {
			pods = append(pods, decodedPod{
				Name: fmt.Sprintf("pods[%d]", i),
				Err:  fmt.Errorf("pods[%d] is not a Pod: %w", i, err),
			})
			continue
		}
		pods = append(pods, decodedPod{Name: pod.Name, Pod: pod})
	}
	return pods
}
