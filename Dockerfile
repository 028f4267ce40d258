# storegate's container image: a multi-stage build, a small non-root runtime.
#
#   docker build -t storegate --build-arg GIT_COMMIT=$(git rev-parse --short=12 HEAD) .
#   docker run --rm -p 8080:8080 storegate                      # sandbox mode (demo store)
#   docker run --rm -p 8080:8080 -e STOREGATE_UPSTREAM_URL=https://shop.example \
#       -e STOREGATE_UPSTREAM_TOKEN=... -e STOREGATE_ADMIN_KEY_SHA256=... storegate
#
# The build context excludes .git (see .dockerignore), so the commit shown by
# `storegate --version` and `storegate_build_info` comes from the GIT_COMMIT build argument.

# ---- build ------------------------------------------------------------------------------
FROM rust:1.89-slim-bookworm AS build
WORKDIR /src
# Dependencies first, so that a source change does not rebuild them: a throwaway crate
# with the real manifests and lock file.
COPY Cargo.toml Cargo.lock ./
COPY crates/sandbox/Cargo.toml crates/sandbox/Cargo.toml
RUN mkdir -p src crates/sandbox/src \
 && echo 'fn main() {}' > src/main.rs && touch src/lib.rs crates/sandbox/src/lib.rs \
 && echo 'fn main() {}' > build.rs \
 && cargo build --release --locked --bin storegate \
 && rm -rf src crates/sandbox/src build.rs
COPY . .
ARG GIT_COMMIT=unknown
ENV GIT_COMMIT=${GIT_COMMIT}
# `touch` so cargo sees the real sources as newer than the throwaway ones.
RUN touch src/main.rs src/lib.rs crates/sandbox/src/lib.rs build.rs \
 && cargo build --release --locked --bin storegate \
 && mkdir -p /out/data \
 && cp target/release/storegate /out/storegate \
 && cp -r mappings /out/mappings

# ---- run --------------------------------------------------------------------------------
# distroless/cc: glibc and CA certificates, no shell, no package manager; runs as uid 65532.
FROM gcr.io/distroless/cc-debian12:nonroot
WORKDIR /app
COPY --from=build /out/storegate /usr/local/bin/storegate
COPY --from=build --chown=65532:65532 /out/mappings /app/mappings
# OAuth consumers and tokens (STOREGATE_DATA_DIR); mount a volume here to keep them.
COPY --from=build --chown=65532:65532 /out/data /app/data
USER 65532:65532
ENV STOREGATE_LISTEN=0.0.0.0:8080 \
    STOREGATE_LOG_FORMAT=json
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=4s --start-period=10s --retries=3 \
  CMD ["/usr/local/bin/storegate", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/storegate"]
