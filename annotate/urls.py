from django.urls import path

from annotate import views, views_dashboard, views_workspace

urlpatterns = [
    path("", views.home, name="home"),
    path("annotate/<slug:slug>/", views_workspace.workspace, name="workspace"),
    path("dashboard/<slug:slug>/", views_dashboard.dashboard, name="dashboard"),
]
