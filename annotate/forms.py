"""Forms of the lead's and ML engineer's pages (annotate.views_manage, annotate.views_account)."""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model, password_validation
from django.core.validators import MaxValueValidator, MinValueValidator

from annotate import guidelines_templates
from annotate.models import MAX_CONTROL_SHARE, Project, Role, TaskKind
from annotate.services.compare.pairs import MAX_PAIRS_PER_PROBLEM
from annotate.services.exports.options import STEP_ONLY, ExportOptions
from annotate.services.projects import EDITABLE_FIELDS, kind_fixed_message

# Slugs that would read as a page of their own under /projects/.
RESERVED_SLUGS = frozenset({"new", "settings", "data", "members", "export"})
ROLE_CHOICES = [(role.value, role.label) for role in Role]
EXPORT_DEFAULTS = ExportOptions()  # what the export API assumes for an option left out


def _bounded(field: forms.Field, low, high) -> None:
    """The field's range, in place of the model field's own bounds: a PositiveIntegerField brings
    its own "greater than or equal to 0", and -5 then got that and ">= 1" at once."""
    kept = [v for v in field.validators if not isinstance(v, MinValueValidator | MaxValueValidator)]
    field.validators = [*kept, MinValueValidator(low), MaxValueValidator(high)]


class ProjectSettingsForm(forms.ModelForm):
    """The settings a lead edits; the create form adds the slug."""

    class Meta:
        model = Project
        fields = list(EDITABLE_FIELDS)
        labels = {
            "name": "Name",
            "task_kind": "Task kind",
            "pairs_per_problem": "Pairs per problem",
            "overlap": "Overlap",
            "qc_rate": "QC rate",
            "selection_strategy": "Selection strategy",
            "control_share": "Control share",
            "retrain_every": "Auto-retrain threshold",
            "critique_required": "Critique required on -1 steps",
            "rate_observations": "Rate observations (agent traces)",
            "screening_required": "Screening answers required",
            "screening_threshold": "Screening pass mark",
            "guidelines": "Guidelines",
        }
        help_texts = {
            "name": "Shown to annotators and on the dashboard.",
            "task_kind": "Steps: annotators rate each step of a model-written solution (+1, 0, -1). Compare: they "
            "say which of two solutions of one problem is better (pairs are made when data is imported). "
            "Fixed once data is imported.",
            "pairs_per_problem": "Each import pairs every problem's solutions up to this many pairs "
            f"(1 to {MAX_PAIRS_PER_PROBLEM:,}), informative first (one answer graded right and the other wrong, then "
            "different final answers), each solution in as few pairs as possible. A change applies to later imports; "
            "pairs already made stay.",
            "overlap": "How many different annotators label each solution (1 to 10). A change applies at once: "
            "raising it puts solutions that already have their labels back in the queue, for annotators who "
            "have not labeled them; lowering it takes out those that now have enough. Tasks in progress are kept.",
            "qc_rate": "Share of served tasks that are gold questions, from 0 to 1 (0.05 = one in twenty).",
            "control_share": "Share of the queue served at random as a control, "
            f"from 0 to {MAX_CONTROL_SHARE} (0.1 = one in ten), "
            "so the dashboard can estimate the labels the strategy saves; not used by the random strategy. "
            "A change reorders the open queue at once (a worker, within a minute).",
            "selection_strategy": "The queue's order; the default gives graded-wrong answers half the labels. "
            "The dashboard says how each did against random. A change reorders the open queue at once "
            "(a worker, within a minute).",
            "retrain_every": "Retrain the PRM after this many new step labels (0: only when asked).",
            "critique_required": "Annotators must say in words what is wrong with every step they rate -1.",
            "rate_observations": "Agent traces: observation steps (tool output) are rated too; otherwise only shown.",
            "screening_required": "A new annotator first answers this many screening questions (solutions marked "
            "screening, with a gold label: imported PRM800K screening records, or marked in the admin) and gets "
            "other work only after passing; 0: no screening. Leads are never screened. Lowered, it decides at once "
            "those who have answered enough.",
            "screening_threshold": "Share of screening steps rated as the gold label rates them, from 0 to 1, that "
            "passes (0.75 = three in four). Applies to decisions from now on; a decided annotator stays decided "
            "(pass or fail one by hand in the admin: Annotator statuses).",
            "guidelines": "Markdown with $LaTeX$ math; annotators read it beside every task. Raw HTML shows as text.",
        }
        widgets = {"guidelines": forms.Textarea(attrs={"rows": 14, "data-markdown-source": "guidelines"})}

    def __init__(self, *args, kind_fixed: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # A project with data keeps its kind: the page shows it as fixed text instead of a choice.
        self.kind_fixed = kind_fixed
        if kind_fixed:
            del self.fields["task_kind"]
        self.fields["name"].required = True
        _bounded(self.fields["overlap"], 1, 10)
        self.fields["overlap"].widget.attrs.update(min=1, max=10)
        _bounded(self.fields["qc_rate"], 0.0, 1.0)
        self.fields["qc_rate"].widget.attrs.update(min=0, max=1, step=0.01)
        self.fields["control_share"].widget.attrs.update(min=0, max=MAX_CONTROL_SHARE, step=0.01)
        self.fields["control_share"].required = False  # a form from before the field keeps the current share
        # 0 turns automatic retraining off (ml.services_auto; the dashboard and README say so)
        _bounded(self.fields["retrain_every"], 0, 10_000_000)
        self.fields["retrain_every"].widget.attrs.update(min=0)
        _bounded(self.fields["screening_required"], 0, 1000)
        self.fields["screening_required"].widget.attrs.update(min=0, max=1000)
        _bounded(self.fields["screening_threshold"], 0.0, 1.0)
        self.fields["screening_threshold"].widget.attrs.update(min=0, max=1, step=0.01)
        for name in ("screening_required", "screening_threshold"):
            self.fields[name].required = False  # a form from before the fields keeps the current rule
        pairs = self.fields["pairs_per_problem"]
        pairs.required = False  # a form from before the field keeps the current bound
        pairs.widget.attrs.update(min=1, max=MAX_PAIRS_PER_PROBLEM, step=1)
        message = f"Pairs per problem must be a whole number from 1 to {MAX_PAIRS_PER_PROBLEM:,}."
        pairs.error_messages.update(invalid=message, min_value=message, max_value=message)
        _bounded(pairs, 1, MAX_PAIRS_PER_PROBLEM)
        for validator in pairs.validators:
            if isinstance(validator, MinValueValidator | MaxValueValidator):
                validator.message = message
        if self.instance.pk and self.instance.task_kind == TaskKind.COMPARE:
            self._for_pairs()
        elif "task_kind" in self.fields:
            self._pairs_help_on_choice()
        else:  # a steps project with data: it makes no pairs
            for name in self.COMPARE_ONLY:
                self.fields.pop(name, None)

    # What a compare project has no use for: pairs are not queued by a strategy, and nobody rates steps.
    STEP_ONLY = (
        "selection_strategy",
        "control_share",
        "critique_required",
        "rate_observations",
        "screening_required",
        "screening_threshold",
    )

    # What only a compare project has a use for (hidden in the browser while Steps is chosen).
    COMPARE_ONLY = ("pairs_per_problem",)

    # The help of settings that mean something else for pairs.
    COMPARE_HELP = {
        "overlap": "How many different annotators compare each pair (1 to 10). A change applies at once; tasks "
        "in progress are kept.",
        "retrain_every": "Retrain the reward model after this many new preferences (0: only when asked).",
    }

    def _for_pairs(self) -> None:
        for name in self.STEP_ONLY:
            self.fields.pop(name, None)
        for name, text in self.COMPARE_HELP.items():
            self.fields[name].help_text = text

    def _pairs_help_on_choice(self) -> None:
        """Where the kind is still a choice, the page swaps in the pairs' help while Compare is
        chosen (frontend/src/pages/forms.ts): the words stay here."""
        for name, text in self.COMPARE_HELP.items():
            self.fields[name].widget.attrs["data-compare-help"] = text

    def clean(self) -> dict:
        data = super().clean()
        # A page opened before the first import may still post another kind: refuse it, never drop it.
        posted = self.data.get("task_kind")
        if self.kind_fixed and posted and posted != self.instance.task_kind:
            self.add_error(None, kind_fixed_message(self.instance))
        if data.get("task_kind") == TaskKind.COMPARE:
            # The page hides the step-only settings while Compare is chosen but still posts them
            # (forms.ts keeps them for a way back to Steps): a box ticked before the switch, such as
            # Rate observations, would be stored on a compare project, unseen and never editable
            # there (its settings page leaves them out). Compare projects keep the defaults.
            for name in self.STEP_ONLY:
                if name in self.fields:
                    data[name] = Project._meta.get_field(name).get_default()
        elif "pairs_per_problem" in self.fields and self._steps_chosen():
            # Hidden while Steps is chosen but still posted: what was typed before switching from
            # Compare is neither stored nor refused; the project keeps its bound.
            self._errors.pop("pairs_per_problem", None)
            data["pairs_per_problem"] = self.instance.pairs_per_problem
        return data

    def _steps_chosen(self) -> bool:
        """Steps is the kind posted (a form where the kind is still a choice)."""
        return "task_kind" in self.fields and self.data.get("task_kind", TaskKind.STEPS) != TaskKind.COMPARE

    def clean_pairs_per_problem(self) -> int:
        value = self.cleaned_data.get("pairs_per_problem")
        return self.instance.pairs_per_problem if value is None else value

    def clean_control_share(self) -> float:
        value = self.cleaned_data.get("control_share")
        return self.instance.control_share if value is None else value

    def clean_screening_required(self) -> int:
        value = self.cleaned_data.get("screening_required")
        return self.instance.screening_required if value is None else value

    def clean_screening_threshold(self) -> float:
        value = self.cleaned_data.get("screening_threshold")
        return self.instance.screening_threshold if value is None else value

    def clean_guidelines(self) -> str:
        # Browsers send a textarea's lines with CRLF; stored guidelines use LF, and the field strips
        # the text's ends: an untouched editor must not count (and be audited) as a change.
        value = self.cleaned_data["guidelines"].replace("\r\n", "\n")
        stored = self.instance.guidelines or ""
        return stored if value == stored.strip() else value


class ProjectCreateForm(ProjectSettingsForm):
    content_kind = forms.ChoiceField(
        label="Solutions are",
        choices=guidelines_templates.CHOICES,
        initial="math",
        required=False,
        help_text="Picks the starting guidelines when you leave them empty; each import line names its own kind.",
    )
    slug = forms.SlugField(
        label="Slug",
        max_length=50,
        help_text="Letters, digits, hyphens and underscores (stored in lower case); it is in every URL and "
        "API call of the project and cannot change later. Suggested from the name.",
        widget=forms.TextInput(attrs={"data-slug-target": "1", "autocomplete": "off"}),
    )

    class Meta(ProjectSettingsForm.Meta):
        fields = ["name", "slug", *[f for f in EDITABLE_FIELDS if f != "name"]]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["name"].widget.attrs["data-slug-source"] = "1"

    def clean(self) -> dict:
        data = super().clean()
        data["guidelines"] = guidelines_templates.starting_guidelines(
            text=data.get("guidelines") or "",
            content_kind=data.get("content_kind") or "math",
            task_kind=data.get("task_kind") or "steps",
        )
        return data

    def clean_slug(self) -> str:
        slug = self.cleaned_data["slug"].lower()
        if slug in RESERVED_SLUGS:
            raise forms.ValidationError(f"“{slug}” is reserved; choose another slug.")
        if Project.objects.filter(slug=slug).exists():
            raise forms.ValidationError("A project with this slug exists already; choose another.")
        return slug


class AddMemberForm(forms.Form):
    username = forms.CharField(label="Username", max_length=254, help_text="Their username or e-mail address.")
    # No role ticked in advance: after an add the page came back with the username cleared but
    # Annotator still ticked, so the next person, meant to get only the roles the lead ticked, got it too.
    roles = forms.MultipleChoiceField(label="Roles", choices=ROLE_CHOICES, widget=forms.CheckboxSelectMultiple)


class InviteForm(forms.Form):
    # No role ticked in advance either (as AddMemberForm): a lead who ticked only ML engineer made an
    # invite for Annotator and ML engineer, and the page came back with Annotator ticked again.
    roles = forms.MultipleChoiceField(label="Roles", choices=ROLE_CHOICES, widget=forms.CheckboxSelectMultiple)


class AcceptInviteForm(forms.Form):
    username = forms.CharField(label="Username", max_length=150)
    email = forms.EmailField(label="E-mail (optional)", required=False)
    password1 = forms.CharField(label="Password", widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}))
    password2 = forms.CharField(
        label="Password again", widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )

    def clean_username(self) -> str:
        username = self.cleaned_data["username"]
        user_model = get_user_model()
        user_model.username_validator(username)
        if user_model.objects.filter(username__iexact=username).exists():
            raise forms.ValidationError("This username is taken; choose another.")
        # A lead adds people by username or e-mail: a username that is someone's address would
        # make "add lead@example.com" pick the wrong person.
        if "@" in username and user_model.objects.filter(email__iexact=username).exists():
            raise forms.ValidationError("This is another account's e-mail address; choose another username.")
        return username

    def clean_email(self) -> str:
        email = self.cleaned_data["email"]
        user_model = get_user_model()
        if email and (
            user_model.objects.filter(email__iexact=email).exists()
            or user_model.objects.filter(username__iexact=email).exists()
        ):
            raise forms.ValidationError(
                "An account uses this e-mail address already: log in with it and open the link again, or leave "
                "e-mail empty."
            )
        return email

    def clean(self):
        data = super().clean()
        p1, p2 = data.get("password1"), data.get("password2")
        if p1 and p2 and p1 != p2:
            self.add_error("password2", "The two passwords differ.")
        elif p1:
            user = get_user_model()(username=data.get("username", ""), email=data.get("email", ""))
            try:
                password_validation.validate_password(p1, user)
            except forms.ValidationError as exc:
                self.add_error("password1", exc)
        return data


class ImportForm(forms.Form):
    file = forms.FileField(
        label="File",
        help_text="PRM800K (phase 1 or 2), plain or Math-Shepherd JSONL, optionally gzip-compressed (.jsonl.gz).",
        widget=forms.ClearableFileInput(attrs={"accept": ".jsonl,.json,.gz,.txt"}),
    )


class AutolabelForm(forms.Form):
    """Rendering of an automatic-labeling job's options; the Data page posts them to the autolabel
    API, which validates (autolabel.services.validate_options), so the defaults are the API's."""

    base_url = forms.CharField(
        label="Model server",
        help_text="OpenAI-compatible base URL (vLLM, SGLang, llama.cpp), e.g. http://gpu-box:8000/v1; hosts "
        "inside the network where AUTOLABEL_ALLOWED_HOSTS lists them.",
        widget=forms.URLInput(attrs={"placeholder": "http://gpu-box:8000/v1", "autocomplete": "off"}),
    )
    model = forms.CharField(label="Model", help_text="The name the server serves it under.")
    rollouts = forms.IntegerField(label="Rollouts per step", initial=8, min_value=1, max_value=64)
    max_tokens = forms.IntegerField(label="Max tokens", initial=1024, min_value=1, max_value=32768)
    temperature = forms.FloatField(label="Temperature", initial=0.7, min_value=0, max_value=2)
    concurrency = forms.IntegerField(label="Requests at once", initial=16, min_value=1, max_value=256)
    # autolabel.models.SearchMode's values (annotate does not import autolabel; a test keeps them equal)
    search = forms.ChoiceField(
        label="Search",
        choices=[("binary", "Binary (first error)"), ("full", "Full (every step)")],
    )


INCLUSION = [("include", "Include"), ("exclude", "Exclude"), ("only", "Only these")]


# The export page's formats per task kind: short names, as the select is a quarter of the form
# wide and a longer one was cut off.
STEP_FORMATS = [
    ("prm800k", "PRM800K records"),
    ("trl", "TRL stepwise rows"),
    ("critique", "Critiques"),
    ("math_shepherd", "Math-Shepherd lines"),
]
# A compare project's first-wrong-step marks are step labels too (compare/marks.py): they export
# as PRM800K records or TRL stepwise rows, as the API and the README offer.
COMPARE_FORMATS = [
    ("preference", "TRL preference rows"),
    ("prm800k", "PRM800K records (marks)"),
    ("trl", "TRL stepwise rows (marks)"),
]


class ExportForm(forms.Form):
    """Rendering of the export job's options; the page posts them to the export API, which validates."""

    def __init__(self, *args, task_kind: str = "steps", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        compare = task_kind == "compare"
        self.fields["format"].choices = COMPARE_FORMATS if compare else STEP_FORMATS
        if compare:
            self.fields["format"].help_text = (
                "TRL preference rows: prompt, chosen, rejected, margin. PRM800K records and TRL stepwise rows: "
                "the step labels the first-wrong-step marks made (steps before a mark +1, the marked step -1)."
            )
            for name in STEP_ONLY:  # preferences have no generation, finish reason or screening
                self.fields.pop(name, None)

    format = forms.ChoiceField(
        label="Format",
        choices=STEP_FORMATS,
        help_text="PRM800K: one record per labeled solution, as OpenAI's PRM800K files (ratings -1/0/+1, "
        "anonymous labeler ids). TRL: stepwise supervision rows (prompt, completions, labels). Critiques: "
        "prompt, steps and a verdict per step. Math-Shepherd: one line per human label (per solution with "
        "automatic labels), each step tagged + or -.",
    )
    since = forms.CharField(
        label="Since (cursor)",
        required=False,
        help_text="Only labels newer than an earlier export: paste its cursor (from the table below).",
    )
    generation = forms.CharField(label="Generations", required=False, help_text="Comma-separated rounds, e.g. 0,1.")
    finish_reason = forms.MultipleChoiceField(
        label="Finish reasons",
        required=False,
        choices=[
            ("solution", "Solution"),
            ("found_error", "Found error"),
            ("give_up", "Give up"),
            ("bad_problem", "Bad problem"),
        ],
        widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: all.",
    )
    split = forms.ChoiceField(
        label="Split", required=False, choices=[("", "All"), ("train", "Train"), ("test", "Test (MATH-500)")]
    )
    qc = forms.ChoiceField(label="Gold / QC questions", choices=INCLUSION)
    screening = forms.ChoiceField(label="Screening questions", choices=INCLUSION)
    # TRL only (the page shows and sends them with that format); defaults as the export API's.
    neutral = forms.ChoiceField(
        label="Neutral (0) steps",
        choices=[("positive", "Positive: True"), ("negative", "Negative: False"), ("drop", "Drop: end the row")],
        initial=EXPORT_DEFAULTS.neutral,
        help_text="Positive is PRM800K's scoring, negative TRL's own converter; drop ends a row before a "
        "neutral step. Rows still end at the first step rated -1.",
    )
    alternatives = forms.ChoiceField(
        label="Rated alternatives",
        choices=[("branch", "Branch: rows of their own"), ("drop", "Drop")],
        initial=EXPORT_DEFAULTS.alternatives,
        help_text="Branch: each rated alternative becomes a row of its own, ending at that step; drop: only "
        "the main line.",
    )
    labels = forms.ChoiceField(
        label="Labels",
        choices=[("human", "Human labels"), ("auto", "Automatic labels")],
        initial=EXPORT_DEFAULTS.labels,
        help_text="Automatic: the imported or rollout (Math-Shepherd) labels instead of people's, exported whole "
        "(the filters and options of people's labels do not apply to them).",
    )
    ties = forms.ChoiceField(
        label="Ties",
        choices=[("exclude", "Leave out"), ("include", "Include (margin 0)")],
        initial=EXPORT_DEFAULTS.ties,
    )
    gzip = forms.BooleanField(label="Compress with gzip", required=False)
