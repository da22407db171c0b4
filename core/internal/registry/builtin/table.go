package builtin

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// column is a printer column beyond NAME and AGE.
type column struct {
	name, typ string
	cell      func(obj runtime.Object) any
}

// table renders objects as kubectl prints them: NAME, the kind's own
// columns, AGE.
type table struct {
	columns []column
}

func (t table) ConvertToTable(ctx context.Context, object runtime.Object, opts runtime.Object) (*metav1.Table, error) {
	out := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
	}}
	for _, c := range t.columns {
		out.ColumnDefinitions = append(out.ColumnDefinitions, metav1.TableColumnDefinition{Name: c.name, Type: c.typ})
	}
	out.ColumnDefinitions = append(out.ColumnDefinitions, metav1.TableColumnDefinition{
		Name: "Age", Type: "string", Description: "Time since the object was created."})

	row := func(obj runtime.Object) error {
		m, err := meta.Accessor(obj)
		if err != nil {
			return err
		}
		cells := []any{m.GetName()}
		for _, c := range t.columns {
			cells = append(cells, c.cell(obj))
		}
		cells = append(cells, age(m.GetCreationTimestamp()))
		out.Rows = append(out.Rows, metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: obj}})
		return nil
	}
	if meta.IsListType(object) {
		if err := meta.EachListItem(object, row); err != nil {
			return nil, err
		}
		if l, err := meta.ListAccessor(object); err == nil {
			out.ResourceVersion = l.GetResourceVersion()
			out.Continue = l.GetContinue()
			out.RemainingItemCount = l.GetRemainingItemCount()
		}
		return out, nil
	}
	if err := row(object); err != nil {
		return nil, err
	}
	if m, err := meta.Accessor(object); err == nil {
		out.ResourceVersion = m.GetResourceVersion()
	}
	return out, nil
}

func age(t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(t.Time))
}
