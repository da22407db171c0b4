package kubecluster

import (
	"context"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// provisionerName is the StorageClass provisioner the kit serves.
const provisionerName = "kubecluster.meshplane.io/hostpath"

// startStorage creates the default StorageClass and runs its provisioner.
func (c *Cluster) startStorage(ctx context.Context) error {
	reclaim := corev1.PersistentVolumeReclaimDelete
	binding := storagev1.VolumeBindingImmediate
	sc := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: StorageClassName,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner:       provisionerName,
		ReclaimPolicy:     &reclaim,
		VolumeBindingMode: &binding,
	}
	if _, err := c.client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		return err
	}
	pctx, cancel := context.WithCancel(context.Background())
	c.provCancel, c.provDone = cancel, make(chan struct{})
	go func() {
		defer close(c.provDone)
		for {
			c.provision(pctx)
			select {
			case <-pctx.Done():
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	return nil
}

// provision is one pass of the provisioner: every pending claim of the
// class gets a PersistentVolume on a directory under Dir/volumes, bound to
// it through claimRef (the PV controller completes the binding); every
// released volume of the class is deleted with its directory.
func (c *Cluster) provision(ctx context.Context) {
	claims, err := c.client.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for i := range claims.Items {
		pvc := &claims.Items[i]
		if pvc.Status.Phase != corev1.ClaimPending || pvc.Spec.VolumeName != "" || pvc.DeletionTimestamp != nil {
			continue
		}
		if ptr.Deref(pvc.Spec.StorageClassName, "") != StorageClassName {
			continue
		}
		c.provisionClaim(ctx, pvc)
	}
	volumes, err := c.client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, pv := range volumes.Items {
		if pv.Annotations["pv.kubernetes.io/provisioned-by"] != provisionerName || pv.Status.Phase != corev1.VolumeReleased ||
			pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
			continue
		}
		if err := os.RemoveAll(pv.Spec.HostPath.Path); err != nil {
			continue
		}
		_ = c.client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{})
	}
}

func (c *Cluster) provisionClaim(ctx context.Context, pvc *corev1.PersistentVolumeClaim) {
	name := "pvc-" + string(pvc.UID)
	path := filepath.Join(c.path("volumes"), name)
	if err := os.MkdirAll(path, 0o777); err != nil {
		return
	}
	_ = os.Chmod(path, 0o777) // any pod user may write its volume
	hostPathType := corev1.HostPathDirectory
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name,
			Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": provisionerName}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: pvc.Spec.Resources.Requests[corev1.ResourceStorage]},
			AccessModes:                   pvc.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              StorageClassName,
			VolumeMode:                    pvc.Spec.VolumeMode,
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: path, Type: &hostPathType}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{c.NodeName}}}}}}},
		},
	}
	if _, err := c.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return
	}
}
