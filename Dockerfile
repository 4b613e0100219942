# The adk-temporal image (workers and the gateway): the package, its `adk-temporal` command
# and the examples.
#   docker build -t adk-temporal .
#   docker run --rm adk-temporal adk-temporal --help
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
# Only what the wheel is built from (see .dockerignore): a change to tests or docs elsewhere
# does not invalidate the install layer.
COPY pyproject.toml README.md ./
COPY adk_temporal ./adk_temporal
COPY workflows ./workflows
COPY activities ./activities
COPY examples ./examples
# Compiled at install: the workflow sandbox imports the workflow module for every run,
# and without .pyc files it recompiles the source each time.
RUN pip install '.[postgres,web]' && rm -rf /src

# Without ADK_POSTGRES_DSN / ADK_GCS_BUCKET, sessions (SQLite) and file artifacts live in
# /data, a volume shared by the workers of one host.
RUN useradd --create-home --uid 1000 adk && mkdir -p /data && chown adk:adk /data
USER adk
WORKDIR /home/adk
ENV ADK_DATA_DIR=/data
VOLUME ["/data"]

CMD ["adk-temporal", "worker", "--examples"]
