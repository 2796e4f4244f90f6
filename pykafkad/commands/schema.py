"""``pykafkad schema list|get|register|check|delete|config|mode``: a schema registry that speaks
Confluent's API (pykafkad's own, or Confluent's), as tables or ``--json``."""

from __future__ import annotations

import argparse
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from pykafkad.commands.connection import CommandError
from pykafkad.commands.output import Report

DEFAULT_REGISTRY = "http://127.0.0.1:8081"
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
TIMEOUT_S = 30.0
# What to do next, by Confluent error code.
_NEXT_STEP = {
    40401: "list the subjects with `pykafkad schema list`",
    40402: "list the versions with `pykafkad schema get SUBJECT --versions`",
    40403: "check the id (`pykafkad schema list` shows each subject's latest)",
    40405: "delete it without --permanent first",
    40407: "delete it without --permanent first",
    409: "see why with `pykafkad schema check SUBJECT --file ...`, or change the subject's level with "
         "`pykafkad schema config SUBJECT --set NONE`",
    42201: "fix the schema",
    42205: "set the mode back with `pykafkad schema mode --set READWRITE`",
}


class _Registry:
    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")

    def call(self, path: str, method: str = "GET", body: Any = None, query: dict[str, Any] | None = None) -> Any:
        wanted = {k: ("true" if v is True else v) for k, v in (query or {}).items() if v not in (None, False)}
        url = self.url + path + (f"?{urllib.parse.urlencode(wanted)}" if wanted else "")
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": CONTENT_TYPE})
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
                return json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as e:
            try:
                error = json.loads(e.read())
                code, message = error["error_code"], error["message"]
            except (ValueError, KeyError, TypeError):
                raise CommandError(f"{self.url} answered HTTP {e.code}: is it a schema registry?") from None
            hint = _NEXT_STEP.get(code)
            raise CommandError(f"{message} (error {code})" + (f"; {hint}" if hint else "")) from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise CommandError(f"cannot reach the schema registry at {self.url} ({reason}): is it running? "
                               "set --registry or PYKAFKAD_SCHEMA_REGISTRY") from None


def _subject(name: str) -> str:
    return urllib.parse.quote(name, safe="")


def _schema_text(args: argparse.Namespace) -> str:
    if args.file is not None:
        try:
            return Path(args.file).read_text()
        except OSError as e:
            raise CommandError(f"--file {args.file}: {e.strerror}") from None
    if args.schema is None:
        raise CommandError("give the schema with --file PATH or --schema TEXT")
    return str(args.schema)


def list_subjects(args: argparse.Namespace) -> Report:
    registry = _Registry(args.registry)
    subjects = registry.call("/subjects", query={"subjectPrefix": args.prefix, "deleted": args.deleted})
    rows = []
    for subject in subjects:
        latest = registry.call(f"/subjects/{_subject(subject)}/versions/latest", query={"deleted": args.deleted})
        versions = registry.call(f"/subjects/{_subject(subject)}/versions", query={"deleted": args.deleted})
        level = registry.call(f"/config/{_subject(subject)}", query={"defaultToGlobal": True})["compatibilityLevel"]
        rows.append({"subject": subject, "versions": versions, "latest_version": latest["version"],
                     "latest_id": latest["id"], "type": latest.get("schemaType", "AVRO"), "compatibility": level})
    report = Report(rows, lines=[] if rows else ["no subjects"])
    return report.table("", ["SUBJECT", "TYPE", "VERSIONS", "LATEST", "ID", "COMPATIBILITY"],
                        [[r["subject"], r["type"], len(r["versions"]), r["latest_version"], r["latest_id"],
                          r["compatibility"]] for r in rows])


def get(args: argparse.Namespace) -> Report:
    registry = _Registry(args.registry)
    if args.id is not None:
        found = registry.call(f"/schemas/ids/{args.id}")
        holders = registry.call(f"/schemas/ids/{args.id}/versions")
        found = {"id": args.id, **found, "versions": holders}
        lines = [f"id {args.id} ({found.get('schemaType', 'AVRO')}), in "
                 + (", ".join(f"{h['subject']} v{h['version']}" for h in holders) or "no live subject")]
    else:
        if args.subject is None:
            raise CommandError("give a SUBJECT or --id N")
        if args.versions:
            versions = registry.call(f"/subjects/{_subject(args.subject)}/versions", query={"deleted": args.deleted})
            return Report(versions, lines=[f"{args.subject}: versions {', '.join(str(v) for v in versions)}"])
        found = registry.call(f"/subjects/{_subject(args.subject)}/versions/{args.version}",
                              query={"deleted": args.deleted})
        lines = [f"{found['subject']} version {found['version']}, id {found['id']} "
                 f"({found.get('schemaType', 'AVRO')})"]
    text = found["schema"]
    try:
        lines.append(json.dumps(json.loads(text), indent=2))
    except ValueError:
        lines.append(text)
    return Report(found, lines=lines)


def _reference(text: str) -> dict[str, Any]:
    """``NAME=SUBJECT:VERSION`` as Confluent's reference."""
    name, _, target = text.partition("=")
    subject, _, version = target.rpartition(":")
    if not name or not subject or not version.lstrip("-").isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=SUBJECT:VERSION (e.g. example.Address=address-value:1)")
    return {"name": name, "subject": subject, "version": int(version)}


def _schema_body(args: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = {"schema": _schema_text(args)}
    if args.type != "AVRO":
        body["schemaType"] = args.type
    if args.reference:
        body["references"] = args.reference
    return body


def register_schema(args: argparse.Namespace) -> Report:
    registry = _Registry(args.registry)
    body = _schema_body(args)
    answer = registry.call(f"/subjects/{_subject(args.subject)}/versions", "POST", body,
                           {"normalize": args.normalize})
    found = registry.call(f"/subjects/{_subject(args.subject)}", "POST", body, {"normalize": args.normalize})
    data = {"subject": args.subject, "id": answer["id"], "version": found["version"]}
    return Report(data, lines=[f"{args.subject}: id {answer['id']}, version {found['version']}"])


def check(args: argparse.Namespace) -> Report:
    registry = _Registry(args.registry)
    body = _schema_body(args)
    path = f"/compatibility/subjects/{_subject(args.subject)}/versions"
    if args.version is not None:
        path += f"/{args.version}"
    verdict = registry.call(path, "POST", body, {"verbose": True})
    if verdict["is_compatible"]:
        return Report(verdict, lines=[f"compatible with {args.subject}"])
    report = Report(verdict, lines=[f"NOT compatible with {args.subject}:"], exit_code=1)
    report.lines += [f"  {m}" for m in verdict.get("messages", [])]
    return report


def delete(args: argparse.Namespace) -> Report:
    registry = _Registry(args.registry)
    path = f"/subjects/{_subject(args.subject)}"
    if args.version is not None:
        path += f"/versions/{args.version}"
    deleted = registry.call(path, "DELETE", query={"permanent": args.permanent})
    versions = deleted if isinstance(deleted, list) else [deleted]
    how = "permanently deleted" if args.permanent else "soft-deleted (--permanent removes them for good)"
    return Report({"subject": args.subject, "versions": versions},
                  lines=[f"{args.subject}: version(s) {', '.join(str(v) for v in versions)} {how}"])


def _setting(args: argparse.Namespace, resource: str, put_field: str, got_field: str) -> Report:
    """``/config`` or ``/mode``, global or a subject's: set it with ``--set``, else the one in force."""
    registry = _Registry(args.registry)
    path = f"/{resource}" + (f"/{_subject(args.subject)}" if args.subject else "")
    if args.set is not None:
        value = registry.call(path, "PUT", {put_field: args.set})[put_field]
    else:
        value = registry.call(path, query={"defaultToGlobal": True})[got_field]
    return Report({"subject": args.subject, put_field: value}, lines=[f"{args.subject or 'global'}: {value}"])


def config(args: argparse.Namespace) -> Report:
    return _setting(args, "config", "compatibility", "compatibilityLevel")


def mode(args: argparse.Namespace) -> Report:
    return _setting(args, "mode", "mode", "mode")


def register(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    schema = commands.add_parser("schema", help="schemas in a schema registry (Confluent's API)")
    sub = schema.add_subparsers(dest="action", required=True)
    base = argparse.ArgumentParser(add_help=False)
    base.add_argument("--registry", default=os.environ.get("PYKAFKAD_SCHEMA_REGISTRY", DEFAULT_REGISTRY),
                      help="the registry's URL (env PYKAFKAD_SCHEMA_REGISTRY; default %(default)s)")
    base.add_argument("--json", action="store_true", help="print JSON instead of tables")
    with_schema = argparse.ArgumentParser(add_help=False)
    with_schema.add_argument("--file", help="a file holding the schema")
    with_schema.add_argument("--schema", help="the schema itself")
    with_schema.add_argument("--type", default="AVRO", type=str.upper, choices=["AVRO", "JSON", "PROTOBUF"])
    with_schema.add_argument("--reference", action="append", type=_reference, metavar="NAME=SUBJECT:VERSION",
                             help="a schema it references (repeatable): the name it uses, and the subject version")

    p = sub.add_parser("list", parents=[base], help="subjects, their versions, latest id and compatibility")
    p.add_argument("--prefix", help="only subjects starting with this")
    p.add_argument("--deleted", action="store_true", help="with soft-deleted subjects")
    p.set_defaults(run=list_subjects)
    p = sub.add_parser("get", parents=[base], help="a subject's version (latest by default), or a schema by id")
    p.add_argument("subject", nargs="?")
    p.add_argument("--version", default="latest")
    p.add_argument("--versions", action="store_true", help="list the subject's versions")
    p.add_argument("--id", type=int, help="the schema with this id")
    p.add_argument("--deleted", action="store_true", help="soft-deleted versions too")
    p.set_defaults(run=get)
    p = sub.add_parser("register", parents=[base, with_schema], help="register a schema under a subject")
    p.add_argument("subject")
    p.add_argument("--normalize", action="store_true")
    p.set_defaults(run=register_schema)
    p = sub.add_parser("check", parents=[base, with_schema],
                       help="whether a schema may be registered next (exit 1 if not)")
    p.add_argument("subject")
    p.add_argument("--version", help="against this version only (default: as the subject's level says)")
    p.set_defaults(run=check)
    p = sub.add_parser("delete", parents=[base], help="soft-delete a subject or a version (--permanent after)")
    p.add_argument("subject")
    p.add_argument("--version")
    p.add_argument("--permanent", action="store_true")
    p.set_defaults(run=delete)
    p = sub.add_parser("config", parents=[base], help="the compatibility level, global or a subject's")
    p.add_argument("subject", nargs="?")
    p.add_argument("--set", type=str.upper, metavar="LEVEL",
                   help="NONE, BACKWARD, FORWARD, FULL, or one of them _TRANSITIVE")
    p.set_defaults(run=config)
    p = sub.add_parser("mode", parents=[base], help="the mode, global or a subject's")
    p.add_argument("subject", nargs="?")
    p.add_argument("--set", type=str.upper, metavar="MODE", help="READWRITE, READONLY or IMPORT")
    p.set_defaults(run=mode)
