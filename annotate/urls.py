from django.urls import path

from annotate import views, views_account, views_dashboard, views_manage, views_workspace

urlpatterns = [
    path("", views.home, name="home"),
    path("annotate/<slug:slug>/", views_workspace.workspace, name="workspace"),
    path("dashboard/<slug:slug>/", views_dashboard.dashboard, name="dashboard"),
    # The lead's and ML engineer's pages (annotate.views_manage)
    path("projects/new/", views_manage.project_new, name="project-new"),
    path("projects/<slug:slug>/settings/", views_manage.project_settings, name="project-settings"),
    path("projects/<slug:slug>/data/", views_manage.project_data, name="project-data"),
    path("projects/<slug:slug>/members/", views_manage.project_members, name="project-members"),
    path("projects/<slug:slug>/export/", views_manage.project_export, name="project-export-page"),
    # A user's own account (annotate.views_account)
    path("account/token/", views_account.account_token, name="account-token"),
    path("account/password/", views_account.PasswordChange.as_view(), name="account-password"),
    path("invite/<str:secret>/", views_account.invite_accept, name="invite-accept"),
]
