package main

// Pod attribution through the reference library, and the gang-grouping steps its consumer,
// KAI Scheduler's Karta pod grouper, performs on top of it (as REFERENCE.md §2.7 describes
// them): pod group name pg-<uid>[-keys], minAvailable from CalculateSubtreeScale, v2 podGroup
// with subGroups. The library owns every per-pod answer; this file only strings the calls
// together and collects the pods of each group. A group takes the minAvailable of the first
// pod seen, as the grouper does; every distinct value seen is kept in minMembersSeen.

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/run-ai/karta/pkg/api/runai/v1alpha1"
	"github.com/run-ai/karta/pkg/instructions"
	"github.com/run-ai/karta/pkg/resource"
)

type PodGroupReport struct {
	Name           string                       `json:"name"`
	Format         string                       `json:"format"`
	MinMember      *int32                       `json:"minMember"`
	MinMemberError *string                      `json:"minMemberError"`
	MinMembersSeen []int32                      `json:"minMembersSeen"`
	MinSubGroup    *int                         `json:"minSubGroup"`
	Topology       *v1alpha1.TopologyConstraint `json:"topology"`
	Pods           []string                     `json:"pods"`
	SubGroups      []SubGroupReport             `json:"subGroups"`
}

type SubGroupReport struct {
	Name           string                       `json:"name"`
	MinMember      *int32                       `json:"minMember"`
	MinMemberError *string                      `json:"minMemberError"`
	Topology       *v1alpha1.TopologyConstraint `json:"topology"`
	Pods           []string                     `json:"pods"`
}

// groupPods attributes every pod and gathers the pod groups they imply.
func groupPods(ctx context.Context, karta *v1alpha1.Karta, factory *resource.ComponentFactory, summary *instructions.StructureSummary, pods []decodedPod, uid string) ([]PodReport, []PodGroupReport) {
	reports := make([]PodReport, 0, len(pods))
	groups := []*PodGroupReport{}
	byName := map[string]*PodGroupReport{}
	scales := scaleCache{}
	gang := karta.Spec.Instructions.GangScheduling
	index := newStructureIndex(karta)

	var v2Group *PodGroupReport
	if gang != nil && gang.PodGroup != nil {
		v2Group = newV2Group(ctx, gang.PodGroup, factory, summary, uid)
		groups = append(groups, v2Group)
	}

	for _, decoded := range pods {
		var querier *resource.PodQuerier
		if decoded.Pod != nil {
			querier = resource.NewPodQuerier(decoded.Pod)
		}
		report := attributePod(ctx, decoded, querier, factory, summary, index)
		if querier != nil && report.Component != nil && gang != nil {
			if v2Group != nil {
				joinV2Group(ctx, &report, querier, gang.PodGroup, v2Group, index)
			} else {
				group := joinAlphaGroup(ctx, &report, factory, summary, uid, byName, scales)
				if group != nil && byName[group.Name] == nil {
					byName[group.Name] = group
					groups = append(groups, group)
				}
			}
		}
		reports = append(reports, report)
	}

	out := make([]PodGroupReport, 0, len(groups))
	for _, g := range groups {
		out = append(out, *g)
	}
	return reports, out
}

// attributePod asks the library which component, instance, replica and gang member a pod is.
func attributePod(ctx context.Context, decoded decodedPod, querier *resource.PodQuerier, factory *resource.ComponentFactory, summary *instructions.StructureSummary, index *structureIndex) PodReport {
	report := PodReport{Name: decoded.Name, ReplicaKeys: map[string]string{}, ReplicaKeyErrors: map[string]string{}}
	if decoded.Err != nil {
		report.DecodeError = errText(decoded.Err)
		return report
	}

	component, err := instructions.InferPodComponent(ctx, querier, summary)
	if err != nil {
		report.ComponentError = errText(err)
		return report
	}
	report.Component = &component

	instance, err := instructions.InferPodComponentInstance(ctx, querier, component, factory)
	if err != nil {
		report.InstanceError = errText(err)
	} else {
		report.Instance = instance
	}

	for _, name := range index.lineage(component) {
		definition := index.definitions[name]
		if definition.PodSelector == nil || definition.PodSelector.ReplicaSelector == nil {
			continue
		}
		key, found, err := querier.ExtractReplicaKey(ctx, definition.PodSelector.ReplicaSelector)
		if err != nil {
			report.ReplicaKeyErrors[name] = err.Error()
		} else if found {
			report.ReplicaKeys[name] = key
		}
	}

	effective, err := instructions.GetPodGroupingEffectiveComponent(ctx, querier, component, summary)
	if err != nil {
		report.EffectiveError = errText(err)
		return report
	}
	if effective == nil {
		return report
	}
	report.Effective = &EffectiveReport{
		Component:       effective.EffectiveComponent,
		PodGroupName:    effective.PodGroupName,
		MemberComponent: effective.MemberDefinition.ComponentName,
		GroupByKeyPaths: nonNil(effective.MemberDefinition.GroupByKeyPaths),
		Filters:         nonNil(effective.MemberDefinition.Filters),
	}
	keys, err := querier.ExtractGroupKeys(ctx, effective.MemberDefinition.GroupByKeyPaths)
	if err != nil {
		report.GroupKeysError = errText(err)
	} else {
		report.GroupKeys = keys
	}
	return report
}

// joinAlphaGroup applies the deprecated podGroups form: the effective member names the
// group by its key values; minAvailable is the subtree scale of the effective component,
// narrowed to the pod's instance only when the effective component is the pod's own.
func joinAlphaGroup(ctx context.Context, report *PodReport, factory *resource.ComponentFactory, summary *instructions.StructureSummary, uid string, byName map[string]*PodGroupReport, scales scaleCache) *PodGroupReport {
	switch {
	case report.EffectiveError != nil:
		report.GroupingError = report.EffectiveError
		return nil
	case report.Effective == nil:
		return nil
	case report.GroupKeysError != nil:
		report.GroupingError = report.GroupKeysError
		return nil
	}
	name := "pg-" + uid
	if len(report.GroupKeys) > 0 {
		name += "-" + strings.Join(report.GroupKeys, "-")
	}
	if problems := validation.IsDNS1123Subdomain(name); len(problems) > 0 {
		report.GroupingError = errText(fmt.Errorf("pod group name %q is invalid: %s", name, strings.Join(problems, "; ")))
		return nil
	}
	var instance *string
	if report.Effective.Component == *report.Component {
		if report.InstanceError != nil {
			report.GroupingError = report.InstanceError
			return nil
		}
		instance = report.Instance
	}
	minAvailable, err := scales.subtreeScale(ctx, report.Effective.Component, instance, factory, summary)
	if err != nil {
		report.GroupingError = errText(err)
		return nil
	}
	report.PodGroup = &name
	report.MinAvailable = &minAvailable

	group := byName[name]
	if group == nil {
		first := minAvailable
		group = &PodGroupReport{
			Name: name, Format: "podGroups", MinMember: &first,
			MinMembersSeen: []int32{}, Pods: []string{}, SubGroups: []SubGroupReport{},
		}
	}
	group.Pods = append(group.Pods, report.Name)
	if !containsInt32(group.MinMembersSeen, minAvailable) {
		group.MinMembersSeen = append(group.MinMembersSeen, minAvailable)
	}
	return group
}

// newV2Group builds the single group of the v2 podGroup form with its subgroups' minimums.
func newV2Group(ctx context.Context, mapping *v1alpha1.PodGroupComponentsMapping, factory *resource.ComponentFactory, summary *instructions.StructureSummary, uid string) *PodGroupReport {
	group := &PodGroupReport{
		Name: "pg-" + uid + "-" + mapping.Name, Format: "podGroup", Topology: mapping.Topology,
		MinMembersSeen: []int32{}, Pods: []string{}, SubGroups: []SubGroupReport{},
	}
	if len(mapping.SubGroups) == 0 {
		root := summary.GetKarta().Spec.StructureDefinition.RootComponent.Name
		minAvailable, err := instructions.CalculateSubtreeScale(ctx, root, nil, factory, summary)
		if err != nil {
			group.MinMemberError = errText(err)
		} else {
			group.MinMember = &minAvailable
			group.MinMembersSeen = append(group.MinMembersSeen, minAvailable)
		}
		return group
	}
	zero := int32(0)
	count := len(mapping.SubGroups)
	group.MinMember = &zero
	group.MinSubGroup = &count
	for _, sub := range mapping.SubGroups {
		subReport := SubGroupReport{Name: sub.ComponentName, Topology: sub.Topology, Pods: []string{}}
		if _, err := factory.GetComponent(sub.ComponentName); err != nil {
			subReport.MinMemberError = errText(err)
		} else if minAvailable, err := instructions.CalculateSubtreeScale(ctx, sub.ComponentName, nil, factory, summary); err != nil {
			subReport.MinMemberError = errText(err)
		} else if minAvailable <= 0 {
			subReport.MinMemberError = errText(fmt.Errorf("component %s must expose a replica scale definition", sub.ComponentName))
		} else {
			subReport.MinMember = &minAvailable
		}
		group.SubGroups = append(group.SubGroups, subReport)
	}
	return group
}

// joinV2Group puts the pod in the v2 group and in the first subgroup whose component, or a
// descendant of it, has a type selector the pod matches.
func joinV2Group(ctx context.Context, report *PodReport, querier *resource.PodQuerier, mapping *v1alpha1.PodGroupComponentsMapping, group *PodGroupReport, index *structureIndex) {
	report.PodGroup = &group.Name
	report.MinAvailable = group.MinMember
	group.Pods = append(group.Pods, report.Name)
	for i, sub := range mapping.SubGroups {
		matched, err := index.matchesSubtree(ctx, querier, sub.ComponentName)
		if err != nil {
			report.GroupingError = errText(err)
			return
		}
		if matched {
			name := sub.ComponentName
			report.SubGroup = &name
			group.SubGroups[i].Pods = append(group.SubGroups[i].Pods, report.Name)
			return
		}
	}
}

// scaleCache memoises CalculateSubtreeScale per (component, instance) within one workload:
// the answer depends only on the Karta and the object, so the grouper's per-pod call gives
// the same value every time; caching keeps the benchmark about attribution, not repetition.
type scaleCache map[string]scaleAnswer

type scaleAnswer struct {
	value int32
	err   error
}

func (c scaleCache) subtreeScale(ctx context.Context, component string, instance *string, factory *resource.ComponentFactory, summary *instructions.StructureSummary) (int32, error) {
	key := component + "\x00"
	if instance != nil {
		key += "=" + *instance
	}
	if answer, ok := c[key]; ok {
		return answer.value, answer.err
	}
	value, err := instructions.CalculateSubtreeScale(ctx, component, instance, factory, summary)
	c[key] = scaleAnswer{value: value, err: err}
	return value, err
}

// structureIndex answers ancestry questions about the Karta's components.
type structureIndex struct {
	definitions map[string]v1alpha1.ComponentDefinition
	children    map[string][]string
}

func newStructureIndex(karta *v1alpha1.Karta) *structureIndex {
	index := &structureIndex{definitions: map[string]v1alpha1.ComponentDefinition{}, children: map[string][]string{}}
	for _, definition := range allDefinitions(karta) {
		if _, seen := index.definitions[definition.Name]; seen {
			continue
		}
		index.definitions[definition.Name] = definition
		if definition.OwnerRef != nil {
			index.children[*definition.OwnerRef] = append(index.children[*definition.OwnerRef], definition.Name)
		}
	}
	return index
}

// lineage is the component followed by its ancestors (stops on a cycle).
func (s *structureIndex) lineage(name string) []string {
	seen := map[string]bool{}
	out := []string{}
	for name != "" && !seen[name] {
		seen[name] = true
		out = append(out, name)
		definition, ok := s.definitions[name]
		if !ok || definition.OwnerRef == nil {
			break
		}
		name = *definition.OwnerRef
	}
	return out
}

func (s *structureIndex) matchesSubtree(ctx context.Context, querier *resource.PodQuerier, name string) (bool, error) {
	pending := []string{name}
	seen := map[string]bool{}
	for len(pending) > 0 {
		current := pending[0]
		pending = pending[1:]
		if seen[current] {
			continue
		}
		seen[current] = true
		definition := s.definitions[current]
		if definition.PodSelector != nil {
			matched, err := querier.MatchesComponentType(ctx, definition.PodSelector.ComponentTypeSelector)
			if err != nil {
				return false, fmt.Errorf("subgroup %s: %w", name, err)
			}
			if matched {
				return true, nil
			}
		}
		pending = append(pending, s.children[current]...)
	}
	return false, nil
}

func containsInt32(values []int32, v int32) bool {
	for _, x := range values {
		if x == v {
			return true
		}
	}
	return false
}

func nonNil(values []string) []string {
	if values == nil {
		return []string{}
	}
	return values
}
