package fgaclient_test

import (
	"context"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/openfga/openfga/pkg/typesystem"

	"github.com/meshplane/meshplane/apis/fga"
)

// BenchmarkCoreModelVariants: the memory one organization's type system
// retains in OpenFGA (retained-MB/op, as BenchmarkCoreModelTypeSystem) for
// the core module and for smaller variants of it, each without some of its
// relations: what a smaller per-organization model could save (issue 27;
// docs/benchmarks.md, platform scale). The variants are measurements only:
// the webhook checks the relations they drop.
func BenchmarkCoreModelVariants(b *testing.B) {
	without := func(pattern string) string {
		re := regexp.MustCompile(pattern)
		var kept []string
		for _, l := range strings.Split(fga.CoreModule, "\n") {
			if !re.MatchString(l) {
				kept = append(kept, l)
			}
		}
		return strings.Join(kept, "\n")
	}
	for _, v := range []struct{ name, module string }{
		{"core", fga.CoreModule},
		{"without-create-list-watch", without(`define (create|list|watch)_`)},
		{"without-object-verbs", without(`define (get|watch|update|patch|delete): `)},
		{"without-iam", without(`define (` + strings.Join(fga.IAMRelations, "|") + `): `)},
		{"parent-owner-member-only", without(`define (create_|list_|watch_|get|watch|update|patch|delete|` + strings.Join(fga.IAMRelations, "|") + `)`)},
	} {
		b.Run(v.name, func(b *testing.B) {
			model, err := fga.Compose([]fga.Module{{Name: fga.CoreModuleName, Contents: v.module}})
			if err != nil {
				b.Fatal(err)
			}
			relations := 0
			for _, td := range model.GetTypeDefinitions() {
				relations += len(td.GetRelations())
			}
			const kept = 10
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			systems := make([]*typesystem.TypeSystem, kept)
			for i := range systems {
				if systems[i], err = typesystem.NewAndValidate(context.Background(), model); err != nil {
					b.Fatal(err)
				}
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(systems)
			for b.Loop() {
				if _, err := typesystem.NewAndValidate(context.Background(), model); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/kept/1e6, "retained-MB/op")
			b.ReportMetric(float64(relations), "relations")
		})
	}
}
