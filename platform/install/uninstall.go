package install

import (
	"context"
	"fmt"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Uninstall removes the release. Its PersistentVolumeClaims (StatefulSet
// claims are not part of the release) stay unless o.DeleteVolumes. No
// release is not an error.
func Uninstall(ctx context.Context, o *Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	c, err := o.connect()
	if err != nil {
		return err
	}
	start := time.Now()
	cur, err := currentRelease(c.helm, o.ReleaseName)
	if err != nil {
		return err
	}
	if cur == nil || cur.Info.Status == release.StatusUninstalled {
		fmt.Fprintf(o.Out, "no release %s in namespace %s: nothing to uninstall\n", o.ReleaseName, o.Namespace)
	} else {
		un := action.NewUninstall(c.helm)
		un.Wait, un.Timeout = true, o.Timeout
		res, err := un.Run(o.ReleaseName)
		if err != nil {
			return fmt.Errorf("uninstall of release %s: %w", o.ReleaseName, err)
		}
		fmt.Fprintf(o.Out, "release %s uninstalled from namespace %s in %s\n", o.ReleaseName, o.Namespace, time.Since(start).Round(time.Second))
		if res != nil && res.Info != "" {
			fmt.Fprintln(o.Out, res.Info)
		}
	}
	return o.volumes(ctx, c)
}

// volumes deletes the release's claims with --delete-volumes, else lists
// what was kept.
func (o *Options) volumes(ctx context.Context, c *cluster) error {
	sel := labels.SelectorFromSet(labels.Set{InstanceLabel: o.ReleaseName}).String()
	pvcs, err := c.client.CoreV1().PersistentVolumeClaims(o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return fmt.Errorf("listing the release's PersistentVolumeClaims: %w", err)
	}
	for _, pvc := range pvcs.Items {
		if !o.DeleteVolumes {
			fmt.Fprintf(o.Out, "kept PersistentVolumeClaim %s (delete it with --delete-volumes)\n", pvc.Name)
			continue
		}
		if pvc.DeletionTimestamp != nil {
			continue
		}
		if err := c.client.CoreV1().PersistentVolumeClaims(o.Namespace).Delete(ctx, pvc.Name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("deleting PersistentVolumeClaim %s: %w", pvc.Name, err)
		}
		fmt.Fprintf(o.Out, "deleted PersistentVolumeClaim %s\n", pvc.Name)
	}
	return nil
}
