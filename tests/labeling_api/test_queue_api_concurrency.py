"""Many annotators over real HTTP (Django's threaded live server) against one queue."""

import json
import threading
from collections import Counter
from http.client import HTTPConnection
from urllib.parse import urlparse

import pytest
from django.db import connection
from rest_framework.authtoken.models import Token

from annotate.models import Annotation
from tests.factories import make_project, make_solutions, make_user, payload

pytestmark = pytest.mark.django_db(transaction=True)


def test_twenty_clients_over_http_label_each_solution_once(live_server):
    project = make_project("http-queue", overlap=1)
    solutions = make_solutions(project, 60)
    tokens = [Token.objects.create(user=make_user(project=project)).key for _ in range(20)]
    connection.close()
    address = urlparse(live_server.url)
    errors: list[str] = []
    submitted: list[int] = []

    def annotator(token: str) -> None:
        http = HTTPConnection(address.hostname, address.port, timeout=60)
        headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
        http.request("GET", "/api/v1/projects/http-queue/tasks/next/", headers=headers)
        response = http.getresponse()
        task = json.loads(response.read()) if response.status == 200 else None
        while task is not None:
            body = json.dumps(payload([1, 1, 1], key=f"t{task['id']}"))
            http.request("POST", f"/api/v1/assignments/{task['id']}/submit/", body=body, headers=headers)
            response = http.getresponse()
            data = json.loads(response.read())
            if response.status != 201:
                errors.append(f"{response.status} {data}")
                return
            submitted.append(data["annotation_id"])
            task = data["next"]
        http.close()

    threads = [threading.Thread(target=annotator, args=(token,)) for token in tokens]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)

    assert not errors
    assert len(submitted) == len(set(submitted)) == 60
    per_solution = Counter(Annotation.objects.filter(project=project).values_list("solution_id", flat=True))
    assert per_solution == {s.pk: 1 for s in solutions}
