package wording

import (
	"errors"

	"github.com/sidecarlab/sidecarlab/clustermesh"
	"github.com/sidecarlab/sidecarlab/engine/input"
)

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

// ClusterError is a failed read of a cluster (a *clustermesh.Error or *clustermesh.Refused in
// err's chain) in the reader's language, with the cause (the API server's or the ConfigMaps'
// error) as it is; any other error as it is.
func (w Words) ClusterError(err error) string {
	var ce *clustermesh.Error
	var refused *clustermesh.Refused
	switch {
	case errors.As(err, &ce):
		text := w.loc().TMap("wording.cluster."+ce.ID, ce.Params)
		if ce.Err != nil {
			text += ": " + w.errorText(ce.Err)
		}
		return text
	case errors.As(err, &refused):
		return w.loc().T(refused.MessageID(), "Request", refused.Request(), "Namespace", refused.Namespace, "Error", refused.Err.Error())
	}
	return err.Error()
}

// errorText is an error in the reader's language: an input error or a fault worded, any other
// as it is.
func (w Words) errorText(err error) string {
	switch e := err.(type) {
	case *input.Error:
		return w.InputErrorText(e)
	case *input.Fault:
		return w.FaultText(e)
	}
	var ie *input.Error
	if errors.As(err, &ie) {
		return w.InputErrorText(ie)
	}
	return err.Error()
}
