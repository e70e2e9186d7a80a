from django.urls import path

from annotate import views, views_workspace

urlpatterns = [
    path("", views.home, name="home"),
    path("annotate/<slug:slug>/", views_workspace.workspace, name="workspace"),
]
