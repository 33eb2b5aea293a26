package main

// The describe mode: everything the reference library computes for one workload, as JSON.
//
// Request:  {"karta": {...}, "object": {...}, "pods": [...], "uid": "optional gang owner uid"}
// Report:   see the Report type; every failing library call is reported next to its value
// (fooError) instead of aborting, so one request shows every answer the library gives.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/run-ai/karta/pkg/api/runai/v1alpha1"
	"github.com/run-ai/karta/pkg/instructions"
	"github.com/run-ai/karta/pkg/resource"
	"github.com/run-ai/karta/pkg/tree"
)

type describeRequest struct {
	Karta  json.RawMessage   `json:"karta"`
	Object json.RawMessage   `json:"object"`
	Pods   []json.RawMessage `json:"pods"`
	UID    *string           `json:"uid"`
}

// Report is the describe output.
type Report struct {
	Reference          map[string]string `json:"reference"`
	IgnoredKartaFields []string          `json:"ignoredKartaFields"`
	Validation         Validation        `json:"validation"`
	Components         []ComponentReport `json:"components"`
	Pods               []PodReport       `json:"pods"`
	PodGroups          []PodGroupReport  `json:"podGroups"`
	Tree               *TreeReport       `json:"tree"`
	TreeError          *string           `json:"treeError"`
}

type Validation struct {
	Valid  bool     `json:"valid"`
	Errors []string `json:"errors"`
}

type ComponentReport struct {
	Name                    string                     `json:"name"`
	Kind                    *v1alpha1.GroupVersionKind `json:"kind"`
	OwnerRef                *string                    `json:"ownerRef"`
	HasPodDefinition        bool                       `json:"hasPodDefinition"`
	HasInstanceIdDefinition bool                       `json:"hasInstanceIdDefinition"`
	InstanceIds             []string                   `json:"instanceIds"`
	InstanceIdsError        *string                    `json:"instanceIdsError"`
	Instances               []InstanceReport           `json:"instances"`
	ExtractionErrors        map[string]string          `json:"extractionErrors"`
	Status                  *resource.Status           `json:"status"`
	StatusError             *string                    `json:"statusError"`
	SubtreeScale            *int32                     `json:"subtreeScale"`
	SubtreeScaleError       *string                    `json:"subtreeScaleError"`
}

type InstanceReport struct {
	ID                     string                      `json:"id"`
	Scale                  *resource.Scale             `json:"scale"`
	PodTemplateSpec        any                         `json:"podTemplateSpec"`
	PodSpec                any                         `json:"podSpec"`
	Metadata               any                         `json:"metadata"`
	FragmentedPodSpec      *resource.FragmentedPodSpec `json:"fragmentedPodSpec"`
	SubtreeScale           *int32                      `json:"subtreeScale"`
	SubtreeScaleError      *string                     `json:"subtreeScaleError"`
	ExtractedInstanceParts []string                    `json:"extractedInstanceParts"`
}

type PodReport struct {
	Name             string            `json:"name"`
	DecodeError      *string           `json:"decodeError,omitempty"`
	Component        *string           `json:"component"`
	ComponentError   *string           `json:"componentError"`
	Instance         *string           `json:"instance"`
	InstanceError    *string           `json:"instanceError"`
	ReplicaKeys      map[string]string `json:"replicaKeys"`
	ReplicaKeyErrors map[string]string `json:"replicaKeyErrors"`
	Effective        *EffectiveReport  `json:"effective"`
	EffectiveError   *string           `json:"effectiveError"`
	GroupKeys        []string          `json:"groupKeys"`
	GroupKeysError   *string           `json:"groupKeysError"`
	PodGroup         *string           `json:"podGroup"`
	SubGroup         *string           `json:"subGroup"`
	MinAvailable     *int32            `json:"minAvailable"`
	GroupingError    *string           `json:"groupingError"`
}

type EffectiveReport struct {
	Component       string   `json:"component"`
	PodGroupName    string   `json:"podGroupName"`
	MemberComponent string   `json:"memberComponent"`
	GroupByKeyPaths []string `json:"groupByKeyPaths"`
	Filters         []string `json:"filters"`
}

func runDescribe(r io.Reader) (any, error) {
	data, err := readAll(r)
	if err != nil {
		return nil, err
	}
	var req describeRequest
	if err := json.Unmarshal(data, &req); err != nil {
		return nil, fmt.Errorf("request is not a JSON object {karta, object, pods}: %w", err)
	}
	return describeOne(&req)
}

// runDescribeMany answers {"requests": [request, ...]} with {"reports": [report, ...]}, one
// process for a whole test suite; a request that cannot be decoded gets {"error": "..."}.
func runDescribeMany(r io.Reader) (any, error) {
	data, err := readAll(r)
	if err != nil {
		return nil, err
	}
	var batch struct {
		Requests []describeRequest `json:"requests"`
	}
	if err := json.Unmarshal(data, &batch); err != nil {
		return nil, fmt.Errorf("input is not a JSON object {\"requests\": [...]}: %w", err)
	}
	reports := make([]any, 0, len(batch.Requests))
	for i := range batch.Requests {
		report, err := describeOne(&batch.Requests[i])
		if err != nil {
			reports = append(reports, map[string]string{"error": fmt.Sprintf("requests[%d]: %v", i, err)})
			continue
		}
		reports = append(reports, report)
	}
	return map[string]any{"reports": reports}, nil
}

func describeOne(req *describeRequest) (report any, err error) {
	defer func() {
		// A panic inside the library is an answer too (a crash a Go consumer would see);
		// report it for this request instead of losing the whole batch.
		if recovered := recover(); recovered != nil {
			report, err = nil, fmt.Errorf("reference library panicked: %v", recovered)
		}
	}()
	karta, ignored, err := decodeKarta(req.Karta)
	if err != nil {
		return nil, err
	}
	object, err := decodeObject(req.Object)
	if err != nil {
		return nil, err
	}
	uid := string(object.GetUID())
	if req.UID != nil {
		uid = *req.UID
	}
	return describe(context.Background(), karta, ignored, object, decodePods(req.Pods), uid), nil
}

func describe(ctx context.Context, karta *v1alpha1.Karta, ignored []string, object *unstructured.Unstructured, pods []decodedPod, uid string) *Report {
	report := &Report{
		Reference:          map[string]string{"module": referenceModule, "version": referenceVersion()},
		IgnoredKartaFields: ignored,
		Validation:         validate(karta),
		Components:         []ComponentReport{},
		Pods:               []PodReport{},
		PodGroups:          []PodGroupReport{},
	}
	factory := resource.NewComponentFactoryFromObject(karta, object)
	summary, err := instructions.NewStructureSummary(karta)
	if err != nil {
		// Only a nil Karta fails here, and decodeKarta never returns one.
		panic(err)
	}

	for _, definition := range allDefinitions(karta) {
		report.Components = append(report.Components, describeComponent(ctx, definition.Name, factory, summary))
	}

	report.Pods, report.PodGroups = groupPods(ctx, karta, factory, summary, pods, uid)

	built, err := tree.Build(ctx, factory)
	if err != nil {
		report.TreeError = errText(err)
	} else {
		report.Tree = summarizeTree(built)
	}
	return report
}

func allDefinitions(karta *v1alpha1.Karta) []v1alpha1.ComponentDefinition {
	structure := karta.Spec.StructureDefinition
	return append([]v1alpha1.ComponentDefinition{structure.RootComponent}, structure.ChildComponents...)
}

func validate(karta *v1alpha1.Karta) Validation {
	err := v1alpha1.NewKartaValidator(karta).Validate()
	if err == nil {
		return Validation{Valid: true, Errors: []string{}}
	}
	messages := []string{}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			messages = append(messages, e.Error())
		}
	} else {
		messages = append(messages, err.Error())
	}
	return Validation{Valid: false, Errors: messages}
}

func describeComponent(ctx context.Context, name string, factory *resource.ComponentFactory, summary *instructions.StructureSummary) ComponentReport {
	component, err := factory.GetComponent(name)
	if err != nil {
		// Names come from the Karta itself; a duplicate name still resolves to one definition.
		panic(err)
	}
	definition := component.Definition()
	report := ComponentReport{
		Name:                    name,
		Kind:                    definition.Kind,
		OwnerRef:                definition.OwnerRef,
		HasPodDefinition:        component.HasPodDefinition(),
		HasInstanceIdDefinition: component.HasInstanceIdDefinition(),
		Instances:               []InstanceReport{},
		ExtractionErrors:        map[string]string{},
	}

	ids, err := component.GetInstanceIds(ctx)
	if err != nil {
		report.InstanceIdsError = errText(err)
	} else {
		report.InstanceIds = append([]string{}, ids...)
	}

	templates, err := component.GetPodTemplateSpec(ctx)
	noteError(report.ExtractionErrors, "podTemplateSpec", err)
	podSpecs, err := component.GetPodSpec(ctx)
	noteError(report.ExtractionErrors, "podSpec", err)
	metadata, err := component.GetPodMetadata(ctx)
	noteError(report.ExtractionErrors, "metadata", err)
	fragments, err := component.GetFragmentedPodSpec(ctx)
	noteError(report.ExtractionErrors, "fragmentedPodSpec", err)
	scales, err := component.GetScale(ctx)
	noteError(report.ExtractionErrors, "scale", err)
	extracted, err := component.GetExtractedInstances(ctx)
	noteError(report.ExtractionErrors, "extractedInstances", err)

	for _, id := range ids {
		instance := InstanceReport{ID: id, ExtractedInstanceParts: []string{}}
		if v, ok := templates[id]; ok {
			instance.PodTemplateSpec = v
		}
		if v, ok := podSpecs[id]; ok {
			instance.PodSpec = v
		}
		if v, ok := metadata[id]; ok {
			instance.Metadata = v
		}
		if v, ok := fragments[id]; ok {
			instance.FragmentedPodSpec = &v
		}
		if v, ok := scales[id]; ok {
			instance.Scale = &v
		}
		if e, ok := extracted[id]; ok {
			instance.ExtractedInstanceParts = extractedParts(&e)
		}
		if id != "" {
			instanceID := id
			scale, err := instructions.CalculateSubtreeScale(ctx, name, &instanceID, factory, summary)
			if err != nil {
				instance.SubtreeScaleError = errText(err)
			} else {
				instance.SubtreeScale = &scale
			}
		}
		report.Instances = append(report.Instances, instance)
	}

	if definition.StatusDefinition != nil {
		status, err := component.GetStatus(ctx)
		if err != nil {
			report.StatusError = errText(err)
		} else {
			report.Status = status
		}
	}

	scale, err := instructions.CalculateSubtreeScale(ctx, name, nil, factory, summary)
	if err != nil {
		report.SubtreeScaleError = errText(err)
	} else {
		report.SubtreeScale = &scale
	}
	return report
}

// extractedParts names the parts GetExtractedInstances filled for one instance.
func extractedParts(e *resource.ExtractedInstance) []string {
	parts := []string{}
	if e.PodTemplateSpec != nil {
		parts = append(parts, "podTemplateSpec")
	}
	if e.PodSpec != nil {
		parts = append(parts, "podSpec")
	}
	if e.FragmentedPodSpec != nil {
		parts = append(parts, "fragmentedPodSpec")
	}
	if e.Metadata != nil {
		parts = append(parts, "metadata")
	}
	if e.Scale != nil {
		parts = append(parts, "scale")
	}
	sort.Strings(parts)
	return parts
}

func noteError(into map[string]string, part string, err error) {
	if err != nil {
		into[part] = err.Error()
	}
}

func errText(err error) *string {
	text := err.Error()
	return &text
}
