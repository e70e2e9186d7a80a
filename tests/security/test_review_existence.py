"""Routes addressed by a bare id answer a non-member as they answer an id that does not exist.

README "Security": non-members get 404 whether or not the thing exists. The autolabel job routes
(`/api/v1/autolabel-jobs/{id}/`, `.../cancel/`) said "No such project." for another project's job
and "No AutolabelJob matches the given query." for a missing one, so a lead of one project could
list which job ids exist in every other project.
"""

import pytest

from annotate.models import Role
from autolabel.models import AutolabelJob, AutolabelStatus
from tests.api_clients import member_client
from tests.factories import make_project

pytestmark = pytest.mark.django_db


def test_another_projects_autolabel_job_answers_as_a_missing_one():
    mine, theirs = make_project("al-mine"), make_project("al-theirs")
    owner = member_client(theirs, "al-owner", Role.LEAD)
    annotator = member_client(theirs, "al-annotator", Role.ANNOTATOR)
    stranger = member_client(mine, "al-stranger", Role.LEAD)
    job = AutolabelJob.objects.create(project=theirs, requested_by=owner.user, base_url="http://gpu/v1", model="m")
    missing = job.pk + 1000

    for method, suffix in (("get", ""), ("post", "cancel/")):
        existing = getattr(stranger, method)(f"/api/v1/autolabel-jobs/{job.pk}/{suffix}")
        absent = getattr(stranger, method)(f"/api/v1/autolabel-jobs/{missing}/{suffix}")
        assert (
            (existing.status_code, existing.json())
            == (absent.status_code, absent.json())
            == (
                404,
                {"detail": "No such autolabel job."},
            )
        )
    job.refresh_from_db()
    assert job.status == AutolabelStatus.CREATED  # the stranger's cancel changed nothing

    # Members keep the policy's answers: 403 without the lead role, the job for its lead.
    assert annotator.get(f"/api/v1/autolabel-jobs/{job.pk}/").status_code == 403
    assert owner.get(f"/api/v1/autolabel-jobs/{job.pk}/").json()["id"] == job.pk
