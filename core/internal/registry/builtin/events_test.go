package builtin

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

func TestEventConversionRoundTrip(t *testing.T) {
	now := metav1.NewTime(time.Unix(1700000000, 0))
	micro := metav1.NewMicroTime(time.Unix(1700000001, 0))
	core := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "e", Namespace: "ns", Labels: map[string]string{"a": "b"}},
		InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: "ns", Name: "cfg"},
		Related:        &corev1.ObjectReference{Kind: "Secret", Name: "s"},
		Reason:         "Synced", Message: "hello", Type: "Normal", Action: "Sync",
		Source: corev1.EventSource{Component: "ctl"}, FirstTimestamp: now, LastTimestamp: now, Count: 3,
		EventTime: micro, Series: &corev1.EventSeries{Count: 2, LastObservedTime: micro},
		ReportingController: "example.com/ctl", ReportingInstance: "ctl-1",
	}
	v1 := toEventsV1(core).(*eventsv1.Event)
	if v1.Note != "hello" || v1.Regarding.Name != "cfg" || v1.DeprecatedCount != 3 || v1.DeprecatedSource.Component != "ctl" ||
		v1.Series == nil || v1.Series.Count != 2 || v1.Related.Name != "s" || v1.ReportingController != "example.com/ctl" {
		t.Errorf("events.k8s.io/v1 view = %+v, want kube's field mapping", v1)
	}
	back := toCoreEvent(v1).(*corev1.Event)
	if !equality.Semantic.DeepEqual(core, back) {
		t.Errorf("round trip changed the event:\n got %+v\nwant %+v", back, core)
	}
}

func TestEventFieldSelectors(t *testing.T) {
	sel := fields.ParseSelectorOrDie("regarding.name=cfg,reportingController=ctl,type=Normal")
	opts, err := coreEventListOptions(&metainternalversion.ListOptions{FieldSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	got := fields.ParseSelectorOrDie(opts.FieldSelector.String())
	if !got.Matches(fields.Set{"involvedObject.name": "cfg", "reportingComponent": "ctl", "type": "Normal"}) ||
		got.Matches(fields.Set{"involvedObject.name": "other", "reportingComponent": "ctl", "type": "Normal"}) {
		t.Errorf("core selector %q does not select what %q selected", got, sel)
	}
	if _, err := coreEventListOptions(&metainternalversion.ListOptions{FieldSelector: fields.ParseSelectorOrDie("note=x")}); err == nil {
		t.Error("selector on note accepted, want an error")
	}
}
