from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from labeling_api import views

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("projects/", views.ProjectListView.as_view(), name="project-list"),
]
