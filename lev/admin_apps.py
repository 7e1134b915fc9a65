from django.contrib.admin.apps import AdminConfig


class LevAdminConfig(AdminConfig):
    """Django's admin, on the site of lev.admin_site (its title, its sections, its home page)."""

    default_site = "lev.admin_site.LevAdminSite"
