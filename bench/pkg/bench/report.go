package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Units used by Metric.Unit.
const (
	UnitPerSecond = "/s"
	UnitMillis    = "ms"
	UnitSeconds   = "s"
	UnitMiB       = "MiB"
	UnitKiB       = "KiB"
	UnitCount     = "count"
	UnitBytes     = "B"
)

// Metric is one row of the report. Informational rows carry Text and no
// Unit.
type Metric struct {
	Key    string  `json:"key"`
	Figure string  `json:"figure"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit,omitempty"`
	Text   string  `json:"text,omitempty"`
}

// Display renders the value column of the Markdown table.
func (m Metric) Display() string {
	if m.Unit == "" {
		return m.Text
	}
	switch m.Unit {
	case UnitPerSecond:
		if m.Value >= 100 {
			return fmt.Sprintf("%.0f/s", m.Value)
		}
		return fmt.Sprintf("%.1f/s", m.Value)
	case UnitMillis:
		return fmt.Sprintf("%.2f ms", m.Value)
	case UnitSeconds:
		return fmt.Sprintf("%.3f s", m.Value)
	case UnitMiB:
		return fmt.Sprintf("%.1f MiB", m.Value)
	case UnitKiB:
		return fmt.Sprintf("%.1f KiB", m.Value)
	case UnitCount:
		return fmt.Sprintf("%.0f", m.Value)
	case UnitBytes:
		return fmt.Sprintf("%.0f B", m.Value)
	}
	return fmt.Sprintf("%g %s", m.Value, m.Unit)
}

// Report collects metrics and errors; safe for concurrent use.
type Report struct {
	mu       sync.Mutex
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Metrics  []Metric  `json:"metrics"`
	Errors   []string  `json:"errors,omitempty"`
}

// NewReport returns an empty report stamped with the current time.
func NewReport() *Report { return &Report{Started: time.Now().UTC()} }

// Add appends a numeric metric.
func (r *Report) Add(key, figure string, value float64, unit string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Metrics = append(r.Metrics, Metric{Key: key, Figure: figure, Value: value, Unit: unit})
}

// Info appends an informational (text) row.
func (r *Report) Info(key, figure, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Metrics = append(r.Metrics, Metric{Key: key, Figure: figure, Text: text})
}

// Error records a failure; it is listed below the table.
func (r *Report) Error(err error) {
	if err == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Errors = append(r.Errors, err.Error())
}

// HasErrors reports whether any error was recorded.
func (r *Report) HasErrors() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.Errors) > 0
}

func withDetail(figure, detail string) string {
	if detail == "" {
		return figure
	}
	return figure + " (" + detail + ")"
}

// AddLatency appends p50 and p99 rows (milliseconds) of s, figured as
// "<what> p50 (<detail>)"; detail may be empty. Empty samples add nothing.
func (r *Report) AddLatency(key, what, detail string, s Summary) {
	if s.N == 0 {
		return
	}
	r.Add(key+"_p50_ms", withDetail(what+" p50", detail), Millis(s.P50), UnitMillis)
	r.Add(key+"_p99_ms", withDetail(what+" p99", detail), Millis(s.P99), UnitMillis)
}

// AddRun appends "<what>/s (<detail>)" and p50/p99 latency rows for a run,
// plus an error count row when operations failed or the run was aborted.
// Throughput and latency are omitted when no operation succeeded.
func (r *Report) AddRun(key, what, detail string, res RunResult) {
	if res.Ops > 0 {
		r.Add(key+"_per_s", withDetail(what+"/s", detail), res.Rate(), UnitPerSecond)
		r.AddLatency(key, what, detail, res.Summary())
	}
	r.AddErrors(key, what, detail, res)
}

// AddErrors appends an error count row if res had failures or was aborted.
func (r *Report) AddErrors(key, what, detail string, res RunResult) {
	if res.Errors > 0 || res.Aborted {
		r.Add(key+"_errors", withDetail(what+" errors", detail), float64(res.Errors), UnitCount)
	}
}

// Millis converts a duration to fractional milliseconds.
func Millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// MiB converts bytes to mebibytes.
func MiB(b int64) float64 { return float64(b) / (1 << 20) }

func escapeCell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// WriteMarkdown renders the report as a two-column Markdown table followed
// by the list of errors, if any.
func (r *Report) WriteMarkdown(w io.Writer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	b.WriteString("| figure | value |\n|---|---|\n")
	for _, m := range r.Metrics {
		fmt.Fprintf(&b, "| %s | %s |\n", escapeCell(m.Figure), escapeCell(m.Display()))
	}
	if len(r.Errors) > 0 {
		b.WriteString("\nErrors:\n\n")
		for _, e := range r.Errors {
			fmt.Fprintf(&b, "- %s\n", strings.ReplaceAll(e, "\n", " "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON renders the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Started  time.Time `json:"started"`
		Finished time.Time `json:"finished"`
		Metrics  []Metric  `json:"metrics"`
		Errors   []string  `json:"errors,omitempty"`
	}{r.Started, r.Finished, r.Metrics, r.Errors})
}
