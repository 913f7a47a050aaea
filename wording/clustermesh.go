package wording

import "github.com/sidecarlab/sidecarlab/clustermesh"

// RevisionChoice says how a cluster's revision was chosen (clustermesh.Choice), in the
// reader's language; its names as they are.
func (w Words) RevisionChoice(c clustermesh.Choice) string {
	l := w.loc()
	switch c.By {
	case "tag":
		return l.T("wording.via.tag", "Tag", c.Tag, "Configuration", c.Configuration)
	case "revision":
		return l.T("wording.via.revision", "Revision", c.Revision)
	case "webhook":
		if c.Namespace == "" {
			return l.T("wording.via.webhook-labelled", "Webhook", c.Webhook, "Configuration", c.Configuration)
		}
		return l.T("wording.via.webhook", "Namespace", c.Namespace, "Webhook", c.Webhook, "Configuration", c.Configuration)
	case "default":
		return l.T("wording.via.default")
	}
	return c.By
}
