#!/usr/bin/env python3
"""The tenant.io API through a client this project did not write: the
official Kubernetes Python client (Debian's python3-kubernetes), its dynamic
client discovering tenant.io like any other group.

Run by the Go test TestPythonClient against a live stack:

    tenant_client.py ALICE_KUBECONFIG BOB_KUBECONFIG CAROL_KUBECONFIG

alice and bob are members of two tenants, carol of none. Each check prints
"ok: ..."; the first failure prints "FAIL: ..." and exits 1.
"""

import json
import queue
import sys
import threading

from kubernetes import config, dynamic
from kubernetes.dynamic.exceptions import ApiException

GROUP_VERSION = "tenant.io/v1alpha1"


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print("ok: " + msg)


def client_for(kubeconfig):
    return dynamic.DynamicClient(config.new_client_from_config(config_file=kubeconfig))


def networks(client):
    return client.resources.get(api_version=GROUP_VERSION, kind="Network")


def expect_error(status, what, fn, field=None):
    """Runs fn, which must fail with HTTP status; with field, the Status must
    name it among its causes."""
    try:
        fn()
    except ApiException as e:
        check(e.status == status, "%s: HTTP %d (got %d: %s)" % (what, status, e.status, e.reason))
        if field is not None:
            body = json.loads(e.body)
            causes = (body.get("details") or {}).get("causes") or []
            check(any(c.get("field") == field for c in causes), "%s: the Status names field %s (causes %s)" % (what, field, causes))
        return
    fail("%s: succeeded, want HTTP %d" % (what, status))


def network(name, subnets=None):
    spec = {"topology": "Layer2"}
    if subnets:
        spec["subnets"] = subnets
    return {"apiVersion": GROUP_VERSION, "kind": "Network", "metadata": {"name": name}, "spec": spec}


def watch_names(resource, resource_version, out, stop_after):
    """Collects (type, name) of watch events into out until stop_after is seen
    or the server ends the watch."""
    try:
        for event in resource.watch(resource_version=resource_version, timeout=20):
            name = event["object"].metadata.name
            out.put((event["type"], name))
            if name == stop_after:
                return
    except Exception as e:  # reported by the reader
        out.put(("ERROR", str(e)))


def main():
    if len(sys.argv) != 4:
        fail("usage: tenant_client.py ALICE_KUBECONFIG BOB_KUBECONFIG CAROL_KUBECONFIG")
    alice, bob, carol = (client_for(p) for p in sys.argv[1:])

    # Discovery: the dynamic client finds the group's kinds.
    kinds = {r.kind for r in alice.resources.search(group="tenant.io")}
    check({"Tenant", "Namespace", "Network", "FloatingIP", "LoadBalancer"} <= kinds, "discovery finds the tenant.io kinds (%s)" % sorted(kinds))

    a_nets, b_nets, c_nets = networks(alice), networks(bob), networks(carol)

    # List: each tenant its own; carol (no tenant) an empty list.
    listed = a_nets.get()
    names = [n.metadata.name for n in listed.items]
    check("default" in names, "alice lists her networks (%s)" % names)
    check(c_nets.get().items == [], "carol, of no tenant, lists no networks")

    # A watch of alice's that must see her create, and one of bob's that
    # must not.
    a_events, b_events = queue.Queue(), queue.Queue()
    b_list = b_nets.get()
    a_watch = threading.Thread(target=watch_names, args=(a_nets, listed.metadata.resourceVersion, a_events, "py-net"), daemon=True)
    b_watch = threading.Thread(target=watch_names, args=(b_nets, b_list.metadata.resourceVersion, b_events, "py-net"), daemon=True)
    a_watch.start()
    b_watch.start()

    created = a_nets.create(body=network("py-net"))
    check(created.metadata.name == "py-net" and created.metadata.labels["tenant.io/tenant"] != "", "alice creates network py-net")
    try:
        seen = None
        while seen is None or seen[1] != "py-net":
            seen = a_events.get(timeout=20)
            if seen[0] == "ERROR":
                fail("alice's watch: " + seen[1])
        check(seen == ("ADDED", "py-net"), "alice's watch sees ADDED py-net")
    except queue.Empty:
        fail("alice's watch saw no event for py-net in 20s")

    # The errors a client must be able to tell apart.
    expect_error(409, "creating py-net again", lambda: a_nets.create(body=network("py-net")))
    expect_error(422, "a subnet outside the tenant's block", lambda: a_nets.create(body=network("py-bad", ["192.168.77.0/24"])), field="spec.subnets[0]")
    expect_error(403, "carol creating a network", lambda: c_nets.create(body=network("py-carol")))
    expect_error(404, "bob reading alice's py-net", lambda: b_nets.get(name="py-net"))
    expect_error(404, "bob deleting alice's py-net", lambda: b_nets.delete(name="py-net"))

    # Patch and read back.
    patched = a_nets.patch(name="py-net", body={"metadata": {"annotations": {"note": "from python"}}}, content_type="application/merge-patch+json")
    check(patched.metadata.annotations["note"] == "from python", "alice merge-patches py-net")

    a_nets.delete(name="py-net")
    expect_error(404, "py-net after alice deleted it", lambda: a_nets.get(name="py-net"))

    # bob's watch, ended by the server (timeout) or still open, saw nothing of alice's.
    b_watch.join(timeout=1)
    leaked = []
    while not b_events.empty():
        e = b_events.get()
        if e[0] == "ERROR":
            continue
        if e[1].startswith("py-"):
            leaked.append(e)
    check(leaked == [], "bob's watch saw nothing of alice's networks")
    print("PASS")


if __name__ == "__main__":
    main()
