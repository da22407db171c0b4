package bench

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

const sampleStatus = `Name:	meshplane
Umask:	0022
State:	S (sleeping)
Pid:	4242
VmPeak:	 2456780 kB
VmSize:	 2390012 kB
VmHWM:	  312000 kB
VmRSS:	  204800 kB
RssAnon:	  150000 kB
Threads:	23
`

func TestParseVmRSS(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    int64
		wantErr bool
	}{
		{"kernel format", sampleStatus, 204800 * 1024, false},
		{"no unit", "VmRSS:\t12\n", 12 * 1024, false},
		{"mB unit", "VmRSS: 3 mB\n", 3 << 20, false},
		{"missing", "Name:\tkthreadd\nState:\tS\n", 0, true},
		{"empty value", "VmRSS:\n", 0, true},
		{"garbage", "VmRSS: lots kB\n", 0, true},
		{"negative", "VmRSS: -5 kB\n", 0, true},
		{"bad unit", "VmRSS: 5 parsecs\n", 0, true},
		{"not a prefix match", "XVmRSS: 5 kB\n", 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseVmRSS(strings.NewReader(c.in))
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, c.wantErr)
			}
			if got != c.want {
				t.Fatalf("got %d, want %d", got, c.want)
			}
		})
	}
}

func TestReadRSSSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fromParse, err := ParseVmRSS(f)
	if err != nil {
		t.Fatalf("parse /proc/self/status: %v", err)
	}
	fromPid, err := ReadRSS(os.Getpid())
	if err != nil {
		t.Fatalf("ReadRSS(self): %v", err)
	}
	// A Go test binary is at least a few MiB resident and far below 64 GiB.
	for _, v := range []int64{fromParse, fromPid} {
		if v < 1<<20 || v > 64<<30 {
			t.Fatalf("implausible RSS %d bytes", v)
		}
	}
	// Both readings are of the same process moments apart.
	if d := fromPid - fromParse; d > 256<<20 || d < -256<<20 {
		t.Fatalf("readings differ too much: %d vs %d", fromParse, fromPid)
	}
	if _, err := ReadRSS(0); err == nil {
		t.Fatal("ReadRSS(0) should fail")
	}
}

func TestParseStatusKB(t *testing.T) {
	if v, err := ParseStatusKB(strings.NewReader(sampleStatus), "RssAnon"); err != nil || v != 150000*1024 {
		t.Errorf("RssAnon = %d, %v; want %d", v, err, 150000*1024)
	}
	if _, err := ParseStatusKB(strings.NewReader(sampleStatus), "RssFile"); err == nil {
		t.Error("a missing field should fail")
	}
	if _, err := ParseStatusKB(strings.NewReader("RssAnon: 5 MB\n"), "RssAnon"); err == nil {
		t.Error("a unit other than kB should fail")
	}
}

// TestSampleRSSSplitSelf records the split of the test process: its
// anonymous and file parts, and some of its code resident.
func TestSampleRSSSplitSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	rep := &Report{}
	if err := SampleRSSSplit(rep, os.Getpid(), "self", "now"); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, m := range rep.Metrics {
		got[m.Key] = m.Value
	}
	for _, k := range []string{"self_anon_mib", "self_file_mib", "self_text_mib", "self_rodata_mib", "self_pclntab_mib"} {
		if _, ok := got[k]; !ok {
			t.Errorf("no %s in %v", k, got)
		}
	}
	if got["self_text_mib"] <= 0 || got["self_text_mib"] > got["self_file_mib"] {
		t.Errorf("code resident %.2f MiB of %.2f MiB of file pages", got["self_text_mib"], got["self_file_mib"])
	}
}
