# Builds the single sidecarlab binary (generated files are committed, so neither templ nor node
# is needed) and runs the playground on :8080.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/sidecarlab ./cmd/sidecarlab

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/sidecarlab /sidecarlab
# The SQLite link store goes in the nonroot user's home unless --db or SIDECARLAB_POSTGRES says
# otherwise (the Helm chart mounts /data).
WORKDIR /home/nonroot
EXPOSE 8080
ENTRYPOINT ["/sidecarlab", "serve", "--addr", ":8080"]
