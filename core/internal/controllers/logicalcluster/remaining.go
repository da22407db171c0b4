package logicalcluster

import (
	"fmt"
	"sort"
	"strings"
)

// Remaining is what deleting a cluster's content left behind: objects by
// resource (<resource>.<group>) and the finalizers that hold them.
type Remaining struct {
	Objects    map[string]int
	Finalizers map[string]int
}

// NewRemaining returns an empty Remaining.
func NewRemaining() Remaining {
	return Remaining{Objects: map[string]int{}, Finalizers: map[string]int{}}
}

// Empty reports whether nothing is left.
func (r Remaining) Empty() bool { return len(r.Objects) == 0 && len(r.Finalizers) == 0 }

// Message describes what is left in kcp's words (its
// WorkspaceContentDeleted condition), sorted for stable writes.
func (r Remaining) Message() string {
	var parts []string
	if len(r.Objects) > 0 {
		var s []string
		for res, n := range r.Objects {
			s = append(s, fmt.Sprintf("%s has %d resource instances", res, n))
		}
		sort.Strings(s)
		parts = append(parts, "Some resources are remaining: "+strings.Join(s, ", "))
	}
	if len(r.Finalizers) > 0 {
		var s []string
		for f, n := range r.Finalizers {
			s = append(s, fmt.Sprintf("%s in %d resource instances", f, n))
		}
		sort.Strings(s)
		parts = append(parts, "Some content in the logical cluster has finalizers remaining: "+strings.Join(s, ", "))
	}
	return strings.Join(parts, "; ")
}
