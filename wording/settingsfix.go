package wording

// SettingsFix words the button of a fix that changes the settings (the Cluster view's: label
// the namespace, Istio CNI, the seccomp profile, the label instead of the annotation), by the id
// the button posts. option is the install option the fix sets, shown as it is ("" for a fix
// that sets none).
func (w Words) SettingsFix(id, option string) string {
	if option == "" {
		return w.l.T("lab.fix." + id)
	}
	return w.l.T("lab.fix."+id, "Option", option)
}

// SettingsFixLabel words the button of the fix that labels the namespace with label
// ("istio.io/rev=canary").
func (w Words) SettingsFixLabel(id, label string) string {
	return w.l.T("lab.fix."+id, "Label", label)
}

// SettingsFixInstead words a fix that cannot apply where the user is (an install option under a
// mesh that gives its own values): what to set in the installation instead, the injector's
// values key and the install option that sets it.
func (w Words) SettingsFixInstead(id, option, key string) string {
	return w.l.T("lab.fix.instead."+id, "Option", option, "Key", key)
}
