package validation

import (
	"fmt"
	"net/url"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
)

// Limits of HostClaims and HostClasses.
const (
	// MaxHostDataBytes is the largest cloud-init user, meta or network data a
	// HostClaim's Secret may hold: the syncer copies it for the server and
	// refuses a larger one in the claim's conditions.
	MaxHostDataBytes = 64 << 10
	// MaxImageURLLength is the longest image or checksum URL.
	MaxImageURLLength = 2048
	// MaxTenantLabels is the largest number of tenant labels of a HostClass.
	MaxTenantLabels = 16
)

// ValidateHostClassName is an apimachineryvalidation.ValidateNameFunc for
// HostClass names: DNS-1123 labels, short enough for a label value.
var ValidateHostClassName = apimachineryvalidation.NameIsDNSLabel

// ValidateHostClaimName is an apimachineryvalidation.ValidateNameFunc for
// HostClaim names: DNS-1123 labels, which are also hostnames.
var ValidateHostClaimName = apimachineryvalidation.NameIsDNSLabel

// Supported values of the host kinds' enumerations.
var (
	supportedHostClaimKinds      = []tenant.HostClaimKind{tenant.HostClaimBareMetal}
	supportedHardwareVisibility  = []tenant.HostHardwareVisibility{tenant.HostHardwareSummary, tenant.HostHardwareNone}
	supportedImageChecksumTypes  = []string{"md5", "sha256", "sha512", "auto"}
	supportedImageFormats        = []string{"raw", "qcow2", "vdi", "vmdk", "live-iso"}
	tenantLabelsReservedPrefixes = []string{"tenant.io/", "metal3.io/", "kubernetes.io/", "k8s.io/"}
)

// ValidateHostClass checks a HostClass on creation.
func ValidateHostClass(obj *tenant.HostClass) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&obj.ObjectMeta, false, ValidateHostClassName, metadataPath)
	return append(allErrs, validateHostClassSpec(&obj.Spec, specPath)...)
}

// ValidateHostClassUpdate checks an update of a HostClass: the servers'
// namespace is fixed; the selector, labels and offer may change.
func ValidateHostClassUpdate(newObj, oldObj *tenant.HostClass) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validateHostClassSpec(&newObj.Spec, specPath)...)
	return append(allErrs, apimachineryvalidation.ValidateImmutableField(newObj.Spec.HostNamespace, oldObj.Spec.HostNamespace, specPath.Child("hostNamespace"))...)
}

// ValidateHostClassStatusUpdate checks an update of a HostClass's status.
func ValidateHostClassStatusUpdate(newObj, oldObj *tenant.HostClass) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, metadataPath)
	return append(allErrs, validateStatusCommon(newObj.Status.ObservedGeneration, newObj.Status.Conditions, statusPath)...)
}

func validateHostClassSpec(spec *tenant.HostClassSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateDNSLabelRef(spec.HostNamespace, fldPath.Child("hostNamespace"))
	if spec.HostSelector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(spec.HostSelector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("hostSelector"))...)
	}
	labelsPath := fldPath.Child("tenantLabels")
	if len(spec.TenantLabels) > MaxTenantLabels {
		allErrs = append(allErrs, field.TooMany(labelsPath, len(spec.TenantLabels), MaxTenantLabels))
	}
	seen := map[string]bool{}
	for i, k := range spec.TenantLabels {
		p := labelsPath.Index(i)
		for _, msg := range utilvalidation.IsQualifiedName(k) {
			allErrs = append(allErrs, field.Invalid(p, k, msg))
		}
		for _, prefix := range tenantLabelsReservedPrefixes {
			if strings.HasPrefix(k, prefix) || strings.Contains(k, "."+prefix) {
				allErrs = append(allErrs, field.Invalid(p, k, fmt.Sprintf("must not be under %s: those labels are the platform's, not a description of the server", prefix)))
			}
		}
		if seen[k] {
			allErrs = append(allErrs, field.Duplicate(p, k))
		}
		seen[k] = true
	}
	allErrs = append(allErrs, validateEnum(spec.Hardware, supportedHardwareVisibility, false, fldPath.Child("hardware"))...)
	tenantsPath := fldPath.Child("tenants")
	seenTenants := map[string]bool{}
	for i, t := range spec.Tenants {
		p := tenantsPath.Index(i)
		if errs := validateTenantRef(t, p); len(errs) > 0 {
			allErrs = append(allErrs, errs...)
		} else if seenTenants[t] {
			allErrs = append(allErrs, field.Duplicate(p, t))
		}
		seenTenants[t] = true
	}
	if spec.AllTenants && len(spec.Tenants) > 0 {
		allErrs = append(allErrs, field.Invalid(tenantsPath, spec.Tenants, "must be empty when spec.allTenants is true"))
	}
	return allErrs
}

// ValidateHostClaim checks a HostClaim on creation.
func ValidateHostClaim(obj *tenant.HostClaim) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&obj.ObjectMeta, true, ValidateHostClaimName, metadataPath)
	return append(allErrs, validateHostClaimSpec(&obj.Spec, specPath)...)
}

// ValidateHostClaimUpdate checks an update of a HostClaim. The kind, class
// and selector are fixed (another server would be another claim); the
// image may be set or removed, not changed; power, data and reboots may
// change.
func ValidateHostClaimUpdate(newObj, oldObj *tenant.HostClaim) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, metadataPath)
	allErrs = append(allErrs, validateHostClaimSpec(&newObj.Spec, specPath)...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(newObj.Spec.Kind, oldObj.Spec.Kind, specPath.Child("kind"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(newObj.Spec.HostClass, oldObj.Spec.HostClass, specPath.Child("hostClass"))...)
	if !apiequality.Semantic.DeepEqual(newObj.Spec.HostSelector, oldObj.Spec.HostSelector) {
		allErrs = append(allErrs, field.Invalid(specPath.Child("hostSelector"), newObj.Spec.HostSelector, apimachineryvalidation.FieldImmutableErrorMsg))
	}
	if n, o := newObj.Spec.Image, oldObj.Spec.Image; n != nil && o != nil && *n != *o {
		allErrs = append(allErrs, field.Invalid(specPath.Child("image"), n.URL,
			"cannot be changed on a provisioned server: remove the image first (the server is deprovisioned and cleaned), then set the new one"))
	}
	return allErrs
}

// ValidateHostClaimStatusUpdate checks an update of a HostClaim's status.
func ValidateHostClaimStatusUpdate(newObj, oldObj *tenant.HostClaim) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, metadataPath)
	return append(allErrs, validateStatusCommon(newObj.Status.ObservedGeneration, newObj.Status.Conditions, statusPath)...)
}

func validateHostClaimSpec(spec *tenant.HostClaimSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateEnum(spec.Kind, supportedHostClaimKinds, false, fldPath.Child("kind"))
	allErrs = append(allErrs, validateRequiredName(spec.HostClass, utilvalidation.IsDNS1123Label, fldPath.Child("hostClass"))...)
	if spec.HostSelector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(spec.HostSelector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("hostSelector"))...)
	}
	if img := spec.Image; img != nil {
		p := fldPath.Child("image")
		allErrs = append(allErrs, validateImageURL(img.URL, true, p.Child("url"))...)
		if img.Checksum == "" {
			allErrs = append(allErrs, field.Required(p.Child("checksum"), "the server checks the image it writes: give its checksum, or the URL of a file holding it"))
		} else if strings.Contains(img.Checksum, "://") {
			allErrs = append(allErrs, validateImageURL(img.Checksum, false, p.Child("checksum"))...)
		} else if len(img.Checksum) > 128 || strings.Trim(strings.ToLower(img.Checksum), "0123456789abcdef") != "" {
			allErrs = append(allErrs, field.Invalid(p.Child("checksum"), img.Checksum, "must be a hexadecimal digest (at most 128 digits) or an http(s) URL"))
		}
		if img.ChecksumType != "" {
			allErrs = append(allErrs, validateEnum(img.ChecksumType, supportedImageChecksumTypes, true, p.Child("checksumType"))...)
		}
		if img.Format != "" {
			allErrs = append(allErrs, validateEnum(img.Format, supportedImageFormats, true, p.Child("format"))...)
		}
	}
	for _, d := range []struct {
		name string
		ref  *tenant.HostDataSecret
	}{{"userData", spec.UserData}, {"metaData", spec.MetaData}, {"networkData", spec.NetworkData}} {
		if d.ref != nil {
			// A name, never a path: the Secret is read from the claim's own
			// Namespace only.
			allErrs = append(allErrs, validateRequiredName(d.ref.Name, utilvalidation.IsDNS1123Subdomain, fldPath.Child(d.name, "name"))...)
		}
	}
	return allErrs
}

func validateImageURL(s string, required bool, fldPath *field.Path) field.ErrorList {
	if s == "" {
		if required {
			return field.ErrorList{field.Required(fldPath, "")}
		}
		return nil
	}
	if len(s) > MaxImageURLLength {
		return field.ErrorList{field.TooLong(fldPath, "", MaxImageURLLength)}
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return field.ErrorList{field.Invalid(fldPath, s, "must be an http or https URL")}
	}
	if u.User != nil {
		return field.ErrorList{field.Invalid(fldPath, s, "must not carry credentials: the server's provisioner logs image URLs")}
	}
	return nil
}
