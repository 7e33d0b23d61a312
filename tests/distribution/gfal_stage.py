"""Drives Debian's gfal2 (python3-gfal2, system python) against a Tape REST API: one step per
call, its answer as JSON on stdout. Run as `/usr/bin/python3 gfal_stage.py STEP JSON-ARGS`
with {"token": bearer token, "urls": [...], "request": id}. No Django here: this is a client."""
import json
import sys
from urllib.parse import urlsplit

import gfal2


def context(args):
    ctx = gfal2.creat_context()
    cred = ctx.cred_new("BEARER", args["token"])
    # gfal2 matches a credential by URL prefix: the site's root covers the tape endpoint too
    for url in args["urls"]:
        ctx.cred_set(urlsplit(url)._replace(path="/", query="").geturl(), cred)
    return ctx


def errors(errs):
    return [None if e is None else {"code": e.code, "message": e.message} for e in errs]


def main(step, args):
    ctx = context(args)
    urls = args["urls"]
    if step == "stage":
        errs, request = ctx.bring_online(urls, args.get("pintime", 3600), 600, True)
        return {"request": request, "errors": errors(errs)}
    if step == "poll":
        return {"errors": errors(ctx.bring_online_poll(urls, args["request"]))}
    if step == "release":
        return {"errors": errors(ctx.release(urls, args["request"]))}
    if step == "cancel":
        return {"errors": errors(ctx.abort_bring_online(urls, args["request"]))}
    if step == "status":
        return {"status": [ctx.getxattr(url, "user.status") for url in urls]}
    if step == "endpoint":
        return {"uri": ctx.getxattr(urls[0], "taperestapi.uri"),
                "version": ctx.getxattr(urls[0], "taperestapi.version")}
    raise SystemExit(f"unknown step {step}")


if __name__ == "__main__":
    try:
        print(json.dumps(main(sys.argv[1], json.loads(sys.argv[2]))))
    except gfal2.GError as e:
        print(json.dumps({"gerror": {"code": e.code, "message": e.message}}))
