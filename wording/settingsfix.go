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
