package main

import (
	"context"
	"errors"

	"github.com/sidecarlab/sidecarlab/handlers"
	"github.com/sidecarlab/sidecarlab/store"
)

// sqlLinks is the link store of the handlers (handlers.LinkStore) on package store's SQLite or
// PostgreSQL: the id of a link is store.ID of its state, and store.ErrNotFound, which the store
// also answers for an id it could never have made, is handlers.ErrLinkNotFound.
type sqlLinks struct{ db *store.SQL }

func (s sqlLinks) Put(ctx context.Context, l handlers.Link) (string, error) {
	id := store.ID(l.State)
	if err := s.db.Put(ctx, store.Link{ID: id, State: l.State, Istio: l.Istio, OutputHash: l.OutputHash}); err != nil {
		return "", err
	}
	return id, nil
}

func (s sqlLinks) Get(ctx context.Context, id string) (handlers.Link, error) {
	l, err := s.db.Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return handlers.Link{}, handlers.ErrLinkNotFound
	}
	if err != nil {
		return handlers.Link{}, err
	}
	return handlers.Link{State: l.State, Istio: l.Istio, OutputHash: l.OutputHash}, nil
}
