// Command postgres-provider is the PostgreSQL example provider: it turns the
// Databases of every workspace that binds postgres.examples.meshplane.io
// into databases and roles on a PostgreSQL server and hands the
// credentials to the consumer as a Secret (see examples/postgres/README.md).
//
//	postgres-provider --kubeconfig provider.kubeconfig --workspace root:postgres-provider \
//	  --dsn postgres://postgres:secret@127.0.0.1:5432/postgres
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	"github.com/jackc/pgx/v5/pgxpool"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/meshplane/meshplane/examples/internal/frame"
	postgresv1alpha1 "github.com/meshplane/meshplane/examples/postgres/api/v1alpha1"
	"github.com/meshplane/meshplane/examples/postgres/controller"
)

type options struct {
	frame.Options
	DSN           string
	AdvertiseHost string
	AdvertisePort int
}

func main() {
	var o options
	fs := flag.NewFlagSet("postgres-provider", flag.ExitOnError)
	o.AddFlags(fs, postgresv1alpha1.GroupName)
	fs.StringVar(&o.DSN, "dsn", os.Getenv("POSTGRES_DSN"), "PostgreSQL connection URL of a role that may create databases and roles, e.g. a superuser (default $POSTGRES_DSN)")
	fs.StringVar(&o.AdvertiseHost, "advertise-host", "", "host consumers connect to, written into their Secrets (default: the DSN's host)")
	fs.IntVar(&o.AdvertisePort, "advertise-port", 0, "port consumers connect to (default: the DSN's port)")
	log := frame.ParseFlags(fs, os.Args[1:])
	err := o.Validate()
	if o.DSN == "" {
		err = errors.Join(err, errors.New("--dsn (or $POSTGRES_DSN) is required"))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "postgres-provider:", err)
		os.Exit(2)
	}
	if err := run(ctrl.SetupSignalHandler(), o, log.WithName("postgres-provider")); err != nil {
		log.Error(err, "postgres-provider failed")
		os.Exit(1)
	}
}

func run(ctx context.Context, o options, log logr.Logger) error {
	pcfg, err := pgxpool.ParseConfig(o.DSN)
	if err != nil {
		return fmt.Errorf("--dsn: %w", err)
	}
	pcfg.MaxConns = int32(max(o.Workers, 2))
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return fmt.Errorf("connecting to PostgreSQL: %w", err)
	}
	defer pool.Close()
	pingCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err = pool.Ping(pingCtx)
	cancel()
	if err != nil {
		return fmt.Errorf("connecting to PostgreSQL at %s:%d: %w", pcfg.ConnConfig.Host, pcfg.ConnConfig.Port, err)
	}
	host, port := o.AdvertiseHost, o.AdvertisePort
	if host == "" {
		host = pcfg.ConnConfig.Host
	}
	if port == 0 {
		port = int(pcfg.ConnConfig.Port)
	}

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, apisv1alpha1.AddToScheme, postgresv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	cfg, err := o.ProviderConfig("postgres-provider")
	if err != nil {
		return err
	}
	kit, _, err := o.NewKit(ctx, cfg, scheme, log)
	if err != nil {
		return err
	}
	if err := controller.SetupWithManager(kit.Manager, controller.Options{Pool: pool, Host: host, Port: port, Workers: o.Workers}); err != nil {
		return err
	}
	log.Info("starting", "virtualWorkspace", kit.URL, "postgres", fmt.Sprintf("%s:%d", pcfg.ConnConfig.Host, pcfg.ConnConfig.Port))
	return kit.Manager.Start(ctx)
}
