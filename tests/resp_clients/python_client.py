"""The RESP port through Python's redis client (Debian's python3-redis):
a find, the client's own pipelining, two tickets to their match, and the
events read from the start then resumed with a blocking read.

    python3 python_client.py PORT TOKEN HTTP_PORT

Prints "ok" and exits 0 when every check holds; a failed check raises."""
import json
import sys
import threading
import time
import urllib.request

import redis

port, token, http_port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
r = redis.Redis(host="127.0.0.1", port=port, password=token, client_name="python-test",
                decode_responses=True)
assert r.ping()

query = json.dumps({"attacker_id": 91, "mmr": 1500, "attributes": {"region": 1}})
found = json.loads(r.execute_command("MM.FIND", query))
assert found["result"] in ("Success", "NoneFound", "FakeOpponent"), found

# The client's own pipelining: every command in one write, the replies in order.
pipe = r.pipeline(transaction=False)
for i in range(50):
    pipe.execute_command("MM.FIND", query)
    pipe.execute_command("ECHO", str(i))
replies = pipe.execute()
assert len(replies) == 100
for i in range(50):
    assert "players_tested" in json.loads(replies[2 * i])
    assert replies[2 * i + 1] == str(i)

# A refusal is the client's own exception, naming the field.
try:
    r.execute_command("MM.FIND", json.dumps({"attacker_id": 1, "mmr": "x"}))
    raise AssertionError("a bad query was accepted")
except redis.ResponseError as e:
    assert "mmr must be a number" in str(e), str(e)


def solo(player, mmr):
    return json.dumps({"queue": "duel", "players": [
        {"id": player, "mmr": mmr, "rtt_ms": {"paris": 20, "tokyo": 240}}]})


a = json.loads(r.execute_command("MM.TICKET.CREATE", solo(201, 1500)))
b = json.loads(r.execute_command("MM.TICKET.CREATE", solo(202, 1510)))
state = {}
for _ in range(10):
    state = json.loads(r.execute_command("MM.TICKET.GET", a["ticket"], "WAIT", 2))
    if state["state"] == "matched":
        break
assert state["state"] == "matched", state
assert b["ticket"] in state["match"]["tickets"]

# The events: from the start, then resumed after the last id with a
# blocking read that a ticket created meanwhile (over HTTP) ends.
first = r.execute_command("MM.XREAD", "COUNT", 100, "STREAMS", "tickets", "0")
entries = first[0][1]
assert [e[1][e[1].index("state") + 1] for e in entries] == \
    ["waiting", "waiting", "matched", "matched"], entries
last = entries[-1][0]


def later_ticket():
    time.sleep(0.3)
    req = urllib.request.Request(
        "http://127.0.0.1:%d/api/tickets" % http_port, data=solo(203, 1800).encode(),
        headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    urllib.request.urlopen(req).read()


threading.Thread(target=later_ticket).start()
resumed = r.execute_command("MM.XREAD", "BLOCK", 5000, "STREAMS", "tickets", last)
more = resumed[0][1]
assert len(more) == 1, more
event = json.loads(more[0][1][more[0][1].index("json") + 1])
assert event["state"] == "waiting" and event["seq"] == int(last.split("-")[0]) + 1, event
print("ok")
