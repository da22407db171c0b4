package frame

import (
	"flag"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// ParseFlags adds the log flags (-zap-log-level, ...) to fs, parses args
// and installs the logger for controller-runtime and klog: one line per
// entry, no stack traces (errors are on the objects' conditions).
func ParseFlags(fs *flag.FlagSet, args []string) logr.Logger {
	zopts := zap.Options{Development: false, StacktraceLevel: zapcore.DPanicLevel}
	zopts.BindFlags(fs)
	_ = fs.Parse(args)
	log := zap.New(zap.UseFlagOptions(&zopts))
	ctrl.SetLogger(log)
	klog.SetLogger(log)
	return log
}
