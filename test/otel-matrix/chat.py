"""
One conversation of two model calls through the OpenAI Python client, instrumented by the PyPI
package named on the command line, against a local fake OpenAI-compatible server, exported over
OTLP/HTTP (protobuf) to Intake unchanged. Used by test/integration/otel/python-matrix.test.ts.

    python3 chat.py openllmetry|openinference|openai-v2|openai-v2-latest|semantic-kernel

Environment: INTAKE_OTLP_ENDPOINT (<base URL>/otel), INTAKE_SECRET (the ingest secret),
CONVERSATION (the session's id, sent as the resource's session.id).
"""

import asyncio
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KIND = sys.argv[1]
CONVERSATION = os.environ["CONVERSATION"]
ENDPOINT = os.environ["INTAKE_OTLP_ENDPOINT"].rstrip("/")
HEADERS = {"X-Service-Agent-Key": os.environ["INTAKE_SECRET"]}

if KIND.startswith("openai-v2"):
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"  # the older conventions: true or false
if KIND == "openai-v2-latest":
    # The newest conventions (1.37+): the messages in one gen_ai.client.inference.operation.details event.
    os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "EVENT_ONLY"
if KIND == "semantic-kernel":
    os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS"] = "true"
    os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE"] = "true"


class FakeOpenAI(BaseHTTPRequestHandler):
    """Chat completions as OpenAI answers them: the answer names the last user message."""

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        last = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
        if isinstance(last, list):
            last = " ".join(p.get("text", "") for p in last)
        answer = {
            "id": "chatcmpl-matrix",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "gpt-4o-mini"),
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": f"Answer to: {last}"}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
        }
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), FakeOpenAI)
threading.Thread(target=server.serve_forever, daemon=True).start()
OPENAI_URL = f"http://127.0.0.1:{server.server_address[1]}/v1"

from opentelemetry import trace  # noqa: E402
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk._logs import LoggerProvider  # noqa: E402
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402

resource = Resource.create({"service.name": f"matrix-{KIND}", "service.version": "1.0.0", "session.id": CONVERSATION})
tracer_provider = TracerProvider(resource=resource)
tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{ENDPOINT}/v1/traces", headers=HEADERS)))
trace.set_tracer_provider(tracer_provider)
logger_provider = LoggerProvider(resource=resource)
logger_provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter(endpoint=f"{ENDPOINT}/v1/logs", headers=HEADERS)))
try:
    from opentelemetry._logs import set_logger_provider

    set_logger_provider(logger_provider)
except ImportError:
    pass

QUESTIONS = ["Where is my parcel?", "Can it come on Friday?"]
SYSTEM = "You are a delivery assistant."


def openai_conversation():
    from openai import OpenAI

    client = OpenAI(base_url=OPENAI_URL, api_key="sk-matrix")
    messages = [{"role": "system", "content": SYSTEM}]
    for q in QUESTIONS:
        messages.append({"role": "user", "content": q})
        reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages)
        messages.append({"role": "assistant", "content": reply.choices[0].message.content})


async def semantic_kernel_conversation():
    from openai import AsyncOpenAI
    from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion, OpenAIChatPromptExecutionSettings
    from semantic_kernel.contents import ChatHistory

    service = OpenAIChatCompletion(ai_model_id="gpt-4o-mini", async_client=AsyncOpenAI(base_url=OPENAI_URL, api_key="sk-matrix"))
    history = ChatHistory(system_message=SYSTEM)
    for q in QUESTIONS:
        history.add_user_message(q)
        reply = await service.get_chat_message_content(history, OpenAIChatPromptExecutionSettings())
        history.add_assistant_message(str(reply))


if KIND == "openllmetry":
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument()
elif KIND == "openinference":
    from openinference.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument()
elif KIND.startswith("openai-v2"):
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(logger_provider=logger_provider)
elif KIND != "semantic-kernel":
    sys.exit(f"unknown instrumentation {KIND}")

if KIND == "semantic-kernel":
    # Semantic Kernel writes the messages as Python log records with the GenAI event's attributes;
    # OpenTelemetry's LoggingHandler sends them as OTLP log records, as its telemetry guide shows.
    import logging

    from opentelemetry.sdk._logs import LoggingHandler

    handler = LoggingHandler(logger_provider=logger_provider)
    handler.addFilter(logging.Filter("semantic_kernel"))
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.INFO)
    asyncio.run(semantic_kernel_conversation())
else:
    openai_conversation()

tracer_provider.force_flush()
logger_provider.force_flush()
tracer_provider.shutdown()
logger_provider.shutdown()
server.shutdown()
print(json.dumps({"kind": KIND, "conversation": CONVERSATION}))
